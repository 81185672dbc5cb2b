import { Effect, Either, Option, Schema } from "effect"
import { ValidationFailed } from "../domain/Errors.js"
import { type PageRequest, parsePageQuery } from "../domain/Pagination.js"

/**
 * `page` and `limit` as they arrive in a query string; parsed by the convention's rules, not
 * here (`pageRequest`), so a bad value gets the convention's message. The document declares
 * them as the integers they must be.
 */
export const PageParams = {
  page: Schema.optional(Schema.String.annotations({
    jsonSchema: { type: "integer", minimum: 1, description: "Page number (from 1). Sending page or limit switches pagination on." }
  })),
  limit: Schema.optional(Schema.String.annotations({
    jsonSchema: { type: "integer", minimum: 1, maximum: 100, description: "Page size (1–100, default 20)." }
  }))
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

export const pageRequest = (query: { readonly page?: string | undefined; readonly limit?: string | undefined }) =>
  Either.match(parsePageQuery(query), {
    onLeft: (message) => Effect.fail(new ValidationFailed({ code: "VALIDATION_FAILED", message })),
    onRight: (request): Effect.Effect<Option.Option<PageRequest>> => Effect.succeed(request)
  })
