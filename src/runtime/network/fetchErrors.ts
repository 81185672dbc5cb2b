import { Duration } from "effect"
import { PayloadTooLarge, ValidationFailed } from "../../domain/Errors.js"

/**
 * The errors of fetching a caller's URL (media, or a link preview's page and image). None of
 * them carries the URL: it may hold credentials (userinfo, a token in the query), so a message
 * names the host at most (`URL.host`: name and port, never userinfo).
 *
 * Whatever goes wrong fetching the caller's URL is a 400 (a body over the cap aside: 413): the
 * URL is their input, and a gateway status (502/504) would suggest the gateway itself is at fault.
 */

export const mediaTooLarge = (maxBytes: number) =>
  new PayloadTooLarge({
    code: "PAYLOAD_TOO_LARGE",
    message: `media is larger than the limit of ${maxBytes} bytes (MEDIA_MAX_BYTES)`,
    details: { maxBytes }
  })

export const invalidMediaUrl = (reason: string) =>
  new ValidationFailed({ code: "VALIDATION_FAILED", message: `media URL ${reason}` })

export const mediaUrlNotAllowed = (host: string) =>
  new ValidationFailed({
    code: "MEDIA_URL_NOT_ALLOWED",
    message: `media URL host ${host} is, or resolves to, a loopback, private, link-local or otherwise non-public address`,
    details: { host }
  })

export const mediaFetchTimedOut = (host: string, timeout: Duration.Duration) =>
  new ValidationFailed({
    code: "MEDIA_FETCH_TIMEOUT",
    message: `fetching media from ${host} took longer than ${Duration.format(timeout)}`,
    details: { host, timeoutMs: Duration.toMillis(timeout) }
  })

export const mediaFetchFailed = (host: string, reason: string, details: Record<string, unknown> = {}) =>
  new ValidationFailed({
    code: "MEDIA_FETCH_FAILED",
    message: `could not fetch media from ${host}: ${reason}`,
    details: { host, ...details }
  })
