import { type Duration, Effect, Either } from "effect"
import { type Agent, fetch, type Response } from "undici"
import type { PayloadTooLarge, ValidationFailed } from "../../domain/Errors.js"
import type { AddressPolicy } from "../../runtime/network/addressPolicy.js"
import { invalidMediaUrl, mediaFetchFailed, mediaFetchTimedOut, mediaTooLarge, mediaUrlNotAllowed } from "./errors.js"
import { filenameFromContentDisposition } from "./filename.js"
import { AddressNotAllowed, makeGuardedAgent } from "../../runtime/network/guardedAgent.js"
import { basicCredentialsOf, ipLiteralOf, lastPathSegmentOf, parseMediaUrl, withoutUserinfo } from "../../runtime/network/mediaUrl.js"
import { readCapped } from "../../runtime/network/readCapped.js"

export interface FetchMediaOptions {
  readonly maxBytes: number
  /** For the whole fetch: every lookup, connection, redirect and the body. */
  readonly timeout: Duration.Duration
  readonly isAllowed: AddressPolicy
  readonly maxRedirects: number
}

export interface FetchedMedia {
  readonly data: Uint8Array
  /** The Content-Type header: what the server declares, no more (the bytes are sniffed). */
  readonly declaredType: string | undefined
  readonly filename: string | undefined
}

const redirectStatuses = new Set([301, 302, 303, 307, 308])

// Identity encoding: the size cap then holds for the bytes on the wire as for the bytes kept.
const requestHeaders = { accept: "*/*", "accept-encoding": "identity", "user-agent": "Switchboard" }

const discard = (response: Response) => void response.body?.cancel().catch(() => undefined)

/**
 * What a failed request means to the caller: a refused address, or a failure named by the code
 * of the error or of one of its causes (`ECONNREFUSED`, `ENOTFOUND`, …). Codes are safe to show;
 * messages are not (undici's may repeat the URL).
 */
const failureOf = (host: string, error: unknown) => {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof AddressNotAllowed) return mediaUrlNotAllowed(host)
    const code = (cause as { code?: unknown }).code
    if (typeof code === "string" && /^[A-Z0-9_]+$/.test(code)) return mediaFetchFailed(host, `the request failed (${code})`, { reason: code })
  }
  return mediaFetchFailed(host, "the request failed")
}

const request = (url: URL, authorization: string | undefined, agent: Agent, isAllowed: AddressPolicy) => {
  // The agent's lookup guards host names; an IP literal is never looked up, so it is checked here.
  const literal = ipLiteralOf(url)
  if (literal !== undefined && !isAllowed(literal)) return Effect.fail(mediaUrlNotAllowed(url.host))
  const headers = authorization === undefined ? requestHeaders : { ...requestHeaders, authorization }
  return Effect.tryPromise({
    try: (signal) => fetch(withoutUserinfo(url), { dispatcher: agent, redirect: "manual", headers, signal }),
    catch: (error) => failureOf(url.host, error)
  })
}

/** Credentials go to the origin they were given for: a redirect elsewhere does not carry them. */
const credentialsAfterRedirect = (next: URL, previous: URL, authorization: string | undefined) =>
  basicCredentialsOf(next) ?? (next.origin === previous.origin ? authorization : undefined)

/** The name a URL suggests: a last path segment that looks like a file name, from the caller's URL first. */
const filenameFromUrls = (requested: URL, final: URL) => {
  const segments = [lastPathSegmentOf(requested), lastPathSegmentOf(final)]
  return segments.find((segment) => segment?.includes(".")) ?? segments.find((segment) => segment !== undefined)
}

const readMedia = (response: Response, requested: URL, final: URL, maxBytes: number) =>
  Effect.gen(function*() {
    if (!response.ok) {
      discard(response)
      return yield* mediaFetchFailed(final.host, `the server answered ${response.status}`, { status: response.status })
    }
    if (Number(response.headers.get("content-length")) > maxBytes) {
      discard(response)
      return yield* mediaTooLarge(maxBytes)
    }
    const data = yield* readCapped(response.body, maxBytes).pipe(
      Effect.catchTags({
        BodyTooLarge: () => mediaTooLarge(maxBytes),
        BodyReadFailed: () => mediaFetchFailed(final.host, "the connection broke while reading the body")
      })
    )
    return {
      data,
      declaredType: response.headers.get("content-type") ?? undefined,
      filename: filenameFromContentDisposition(response.headers.get("content-disposition")) ?? filenameFromUrls(requested, final)
    } satisfies FetchedMedia
  })

/** Follows redirects by hand, so that every hop goes through the same checks as the first. */
const followRedirects = (requested: URL, agent: Agent, options: FetchMediaOptions) =>
  Effect.gen(function*() {
    let url = requested
    let authorization = basicCredentialsOf(requested)
    for (let redirects = 0;; redirects++) {
      const response = yield* request(url, authorization, agent, options.isAllowed)
      const location = redirectStatuses.has(response.status) ? response.headers.get("location") : null
      if (location === null) return yield* readMedia(response, requested, url, options.maxBytes)
      discard(response)
      if (redirects === options.maxRedirects) {
        return yield* mediaFetchFailed(url.host, `more than ${options.maxRedirects} redirects`, { redirects })
      }
      const next = parseMediaUrl(location, url)
      if (Either.isLeft(next)) return yield* mediaFetchFailed(url.host, `redirected to a URL that ${next.left}`)
      authorization = credentialsAfterRedirect(next.right, url, authorization)
      url = next.right
    }
  })

/**
 * Fetches a caller's media URL: http(s) only, every connection to a policy-approved address,
 * at most `maxRedirects` redirects, at most `maxBytes` read, all within `timeout`.
 */
export const fetchMedia = (
  text: string,
  options: FetchMediaOptions
): Effect.Effect<FetchedMedia, ValidationFailed | PayloadTooLarge> =>
  Effect.gen(function*() {
    const url = yield* Either.mapLeft(parseMediaUrl(text), invalidMediaUrl)
    return yield* Effect.acquireUseRelease(
      // One agent per fetch, destroyed after it: no pooled connection outlives the checks made for it.
      Effect.sync(() => makeGuardedAgent(options.isAllowed)),
      (agent) => followRedirects(url, agent, options),
      (agent) => Effect.sync(() => void agent.destroy().catch(() => undefined))
    ).pipe(Effect.timeoutFail({ duration: options.timeout, onTimeout: () => mediaFetchTimedOut(url.host, options.timeout) }))
  })
