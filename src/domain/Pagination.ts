import { Either, Option } from "effect"

/**
 * The list-pagination convention of the seed (rules 1–11), in one place. Every list endpoint
 * reads its query's integers with `pageQueryInteger` (the API's `page`/`limit` schemas), turns
 * them into a page with `pageRequestOf`, hands the result to its repository (which selects
 * root ids first and counts separately, rules 8–11), and shapes the answer with `toListBody`.
 */
export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 100

/** Which page of a list: all a caller gives. Where the page starts is the store's business (`offsetOf`). */
export interface PageRequest {
  readonly page: number
  readonly limit: number
}

/** Rule 8: a page skips the `(page - 1) * limit` records before it. */
export const offsetOf = ({ limit, page }: PageRequest) => (page - 1) * limit

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
}

export type PageQueryValue = string | number | null | undefined

/** Rule 2: null, empty and missing are absent ("null"/"undefined" as text too, as clients send). */
const isAbsent = (value: PageQueryValue) =>
  value === undefined || value === null || (typeof value === "string" && ["", "null", "undefined"].includes(value.trim()))

/**
 * One of `page` and `limit` as sent: `undefined` when absent (rule 2), else the integer it must be,
 * or the convention's message naming the parameter (the API answers it as 400 VALIDATION_FAILED).
 */
export const pageQueryInteger = (name: string, value: PageQueryValue): Either.Either<number | undefined, string> => {
  if (isAbsent(value)) return Either.right(undefined)
  const text = String(value).trim()
  return /^[+-]?\d+$/.test(text) && Number.isSafeInteger(Number(text))
    ? Either.right(Number(text))
    : Either.left(`${name} must be an integer, got "${text}"`)
}

/** `page` and `limit` once read as integers (`pageQueryInteger`); either may be absent. */
export interface PageNumbers {
  readonly page?: number | undefined
  readonly limit?: number | undefined
}

/** `None` when pagination is off (rule 1), otherwise the page to fetch (rules 3–7). */
export const pageRequestOf = ({ limit, page }: PageNumbers): Option.Option<PageRequest> =>
  page === undefined && limit === undefined
    ? Option.none()
    : Option.some({ page: Math.max(1, page ?? 1), limit: Math.min(MAX_LIMIT, Math.max(1, limit ?? DEFAULT_LIMIT)) })

/**
 * `page` and `limit` as they come (text or numbers): `None` when pagination is off, otherwise
 * the page to fetch. Fails with the convention's message for a value that is not an integer.
 */
export const parsePageQuery = (query: {
  readonly page?: PageQueryValue
  readonly limit?: PageQueryValue
}): Either.Either<Option.Option<PageRequest>, string> =>
  Either.gen(function*() {
    const page = yield* pageQueryInteger("page", query.page)
    const limit = yield* pageQueryInteger("limit", query.limit)
    return pageRequestOf({ page, limit })
  })

export interface PaginationMeta {
  readonly page: number
  readonly limit: number
  readonly total: number
  readonly total_pages: number
}

export type ListBody<A> =
  | { readonly data: ReadonlyArray<A> }
  | { readonly data: { readonly items: ReadonlyArray<A>; readonly pagination: PaginationMeta } }

/** Rules 1 and 10: a plain array when off, items with metadata when on. */
export const toListBody = <A>(request: Option.Option<PageRequest>, page: Page<A>): ListBody<A> =>
  Option.match(request, {
    onNone: () => ({ data: page.items }),
    onSome: ({ limit, page: number }) => ({
      data: {
        items: page.items,
        pagination: { page: number, limit, total: page.total, total_pages: Math.ceil(page.total / limit) }
      }
    })
  })

/** A page of a list held whole in memory (one the network answers at once, such as join requests). */
export const pageOfList = <A>(request: Option.Option<PageRequest>, all: ReadonlyArray<A>): Page<A> =>
  Option.match(request, {
    onNone: () => ({ items: all, total: all.length }),
    onSome: (page) => ({ items: all.slice(offsetOf(page), offsetOf(page) + page.limit), total: all.length })
  })
