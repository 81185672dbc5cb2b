import { type Duration, Effect, Either } from "effect"
import { lookup } from "node:dns/promises"
import { type Dispatcher, fetch, type Response } from "undici"
import type { PayloadTooLarge, ValidationFailed } from "../../domain/Errors.js"
import type { AddressPolicy } from "./addressPolicy.js"
import { filenameFromContentDisposition } from "./contentDisposition.js"
import { invalidMediaUrl, mediaFetchFailed, mediaFetchTimedOut, mediaTooLarge, mediaUrlNotAllowed } from "./fetchErrors.js"
import { AddressNotAllowed, makeGuardedAgent } from "./guardedAgent.js"
import { basicCredentialsOf, ipLiteralOf, lastPathSegmentOf, parseMediaUrl, withoutUserinfo } from "./mediaUrl.js"
import { InvalidProxyUrl, makeProxyAgents } from "./proxy.js"
import { readCapped } from "./readCapped.js"

export interface FetchMediaOptions {
  readonly maxBytes: number
  /** For the whole fetch: every lookup, connection, redirect and the body. */
  readonly timeout: Duration.Duration
  readonly isAllowed: AddressPolicy
  readonly maxRedirects: number
  /** A body past `maxBytes` is cut there instead of refused. */
  readonly truncate?: boolean | undefined
  /** Go out through this proxy (a session's), credentials included; never shown. */
  readonly proxyUrl?: string | undefined
}

export interface FetchedMedia {
  readonly data: Uint8Array
  /** The Content-Type header: what the server declares, no more (the bytes are sniffed). */
  readonly declaredType: string | undefined
  readonly filename: string | undefined
  /** Where the body came from, after redirects. */
  readonly url: URL
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

/**
 * How the requests of one fetch reach the network. Directly, the agent's lookup guards every
 * connection (see guardedAgent.ts), and only IP literals, which are never looked up, are
 * checked before a request. Through a proxy the proxy resolves the name: the gateway resolves
 * it too and refuses it when any address is refused; the proxy could still be told otherwise
 * by its DNS (rebinding), which only the proxy's own rules can stop.
 */
interface Route {
  readonly dispatcher: Dispatcher
  readonly checkHost: (url: URL, isAllowed: AddressPolicy) => Effect.Effect<void, ValidationFailed>
  readonly close: () => void
}

const checkLiteral = (url: URL, isAllowed: AddressPolicy) => {
  const literal = ipLiteralOf(url)
  return literal !== undefined && !isAllowed(literal) ? Effect.fail(mediaUrlNotAllowed(url.host)) : Effect.void
}

const checkResolved = (url: URL, isAllowed: AddressPolicy) =>
  ipLiteralOf(url) !== undefined
    ? checkLiteral(url, isAllowed)
    : Effect.tryPromise({
      try: () => lookup(url.hostname, { all: true }),
      catch: (error) => failureOf(url.host, error)
    }).pipe(Effect.flatMap((addresses) =>
      addresses.length > 0 && addresses.every(({ address }) => isAllowed(address))
        ? Effect.void
        : Effect.fail(mediaUrlNotAllowed(url.host))
    ))

const openRoute = (isAllowed: AddressPolicy, proxyUrl: string | undefined, host: string): Effect.Effect<Route, ValidationFailed> => {
  if (proxyUrl === undefined) {
    const agent = makeGuardedAgent(isAllowed)
    return Effect.succeed({ dispatcher: agent, checkHost: checkLiteral, close: () => void agent.destroy().catch(() => undefined) })
  }
  return Effect.try({
    try: () => makeProxyAgents(proxyUrl),
    // InvalidProxyUrl names the proxy redacted; the caller's host is named, not the proxy.
    catch: (error) => mediaFetchFailed(host, error instanceof InvalidProxyUrl ? "the session's proxy URL is invalid" : "the proxy could not be used")
  }).pipe(Effect.map((agents) => ({
    dispatcher: agents.dispatcher,
    checkHost: checkResolved,
    close: () => {
      agents.agent.destroy()
      void agents.dispatcher.destroy().catch(() => undefined)
    }
  })))
}

const request = (url: URL, authorization: string | undefined, route: Route, isAllowed: AddressPolicy) =>
  Effect.zipRight(
    route.checkHost(url, isAllowed),
    Effect.tryPromise({
      try: (signal) =>
        fetch(withoutUserinfo(url), {
          dispatcher: route.dispatcher,
          redirect: "manual",
          headers: authorization === undefined ? requestHeaders : { ...requestHeaders, authorization },
          signal
        }),
      catch: (error) => failureOf(url.host, error)
    })
  )

/** Credentials go to the origin they were given for: a redirect elsewhere does not carry them. */
const credentialsAfterRedirect = (next: URL, previous: URL, authorization: string | undefined) =>
  basicCredentialsOf(next) ?? (next.origin === previous.origin ? authorization : undefined)

/** The name a URL suggests: a last path segment that looks like a file name, from the caller's URL first. */
const filenameFromUrls = (requested: URL, final: URL) => {
  const segments = [lastPathSegmentOf(requested), lastPathSegmentOf(final)]
  return segments.find((segment) => segment?.includes(".")) ?? segments.find((segment) => segment !== undefined)
}

const readMedia = (response: Response, requested: URL, final: URL, { maxBytes, truncate = false }: FetchMediaOptions) =>
  Effect.gen(function*() {
    if (!response.ok) {
      discard(response)
      return yield* mediaFetchFailed(final.host, `the server answered ${response.status}`, { status: response.status })
    }
    if (!truncate && Number(response.headers.get("content-length")) > maxBytes) {
      discard(response)
      return yield* mediaTooLarge(maxBytes)
    }
    const data = yield* readCapped(response.body, maxBytes, truncate).pipe(
      Effect.catchTags({
        BodyTooLarge: () => mediaTooLarge(maxBytes),
        BodyReadFailed: () => mediaFetchFailed(final.host, "the connection broke while reading the body")
      })
    )
    return {
      data,
      declaredType: response.headers.get("content-type") ?? undefined,
      filename: filenameFromContentDisposition(response.headers.get("content-disposition")) ?? filenameFromUrls(requested, final),
      url: final
    } satisfies FetchedMedia
  })

/** Follows redirects by hand, so that every hop goes through the same checks as the first. */
const followRedirects = (requested: URL, route: Route, options: FetchMediaOptions) =>
  Effect.gen(function*() {
    let url = requested
    let authorization = basicCredentialsOf(requested)
    for (let redirects = 0;; redirects++) {
      const response = yield* request(url, authorization, route, options.isAllowed)
      const location = redirectStatuses.has(response.status) ? response.headers.get("location") : null
      if (location === null) return yield* readMedia(response, requested, url, options)
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
 * Fetches a caller's URL (media, or a page to preview): http(s) only, every connection to a
 * policy-approved address, at most `maxRedirects` redirects, at most `maxBytes` read, all
 * within `timeout`; through a proxy when given one.
 */
export const fetchMedia = (
  text: string,
  options: FetchMediaOptions
): Effect.Effect<FetchedMedia, ValidationFailed | PayloadTooLarge> =>
  Effect.gen(function*() {
    const url = yield* Either.mapLeft(parseMediaUrl(text), invalidMediaUrl)
    return yield* Effect.acquireUseRelease(
      // One route per fetch, destroyed after it: no pooled connection outlives the checks made for it.
      openRoute(options.isAllowed, options.proxyUrl, url.host),
      (route) => followRedirects(url, route, options),
      (route) => Effect.sync(route.close)
    ).pipe(Effect.timeoutFail({ duration: options.timeout, onTimeout: () => mediaFetchTimedOut(url.host, options.timeout) }))
  })
