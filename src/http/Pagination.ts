import { Effect, Either, Option, ParseResult, Schema } from "effect"
import { type Page, type PageNumbers, pageQueryInteger, type PageRequest, pageRequestOf, toListBody } from "../domain/Pagination.js"

/**
 * One of `page` and `limit`: a number to the handlers and to the typed client, text on the wire
 * (a query string), read by the convention's rules (`pageQueryInteger`), so a bad value gets the
 * convention's message (`page must be an integer, got "abc"`) as a 400 VALIDATION_FAILED. Absent
 * text ("", "null", "undefined") decodes to `undefined`, and `undefined` is not sent at all. The
 * document declares the integer the text must be (the annotation on the wire's side, which is
 * the side the document describes).
 */
const pageQueryParam = (name: string, jsonSchema: object) =>
  Schema.optionalToOptional(
    Schema.String.annotations({ jsonSchema }),
    Schema.transformOrFail(Schema.String, Schema.UndefinedOr(Schema.Int), {
      strict: true,
      decode: (text, _, ast) =>
        Either.match(pageQueryInteger(name, text), {
          onLeft: (message) => ParseResult.fail(new ParseResult.Type(ast, text, message)),
          onRight: ParseResult.succeed
        }),
      encode: (value) => ParseResult.succeed(value === undefined ? "" : String(value))
    }),
    { decode: (text) => text, encode: Option.filter((text) => text !== "") }
  )

/** `page` and `limit`, spread into a list endpoint's URL parameters. */
export const PageParams = {
  page: pageQueryParam("page", {
    type: "integer",
    minimum: 1,
    description: "Page number (from 1). Sending page or limit switches pagination on."
  }),
  limit: pageQueryParam("limit", { type: "integer", minimum: 1, maximum: 100, description: "Page size (1–100, default 20)." })
}

export const PaginationMeta = Schema.Struct({
  page: Schema.Number,
  limit: Schema.Number,
  total: Schema.Number,
  total_pages: Schema.Number
})

/** `{data: [...]}` without page/limit, `{data: {items, pagination}}` with them. */
export const ListBody = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  Schema.Struct({
    data: Schema.Union(
      Schema.Array(item),
      Schema.Struct({ items: Schema.Array(item), pagination: PaginationMeta })
    )
  })

/**
 * A list in the pagination convention: the page the query asks for (or everything, rule 1) from
 * `list`, answered as `{data: [...]}` or `{data: {items, pagination}}`.
 */
export const listed = <A, E, R>(query: PageNumbers, list: (page: Option.Option<PageRequest>) => Effect.Effect<Page<A>, E, R>) => {
  const page = pageRequestOf(query)
  return Effect.map(list(page), (found) => toListBody(page, found))
}
