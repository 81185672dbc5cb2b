import { Either } from "effect"
import { isIP } from "node:net"

/**
 * Parses a media URL (relative to `base` for a redirect's Location): http(s) only. The reason
 * of a refusal never repeats the URL, which may hold credentials.
 */
export const parseMediaUrl = (text: string, base?: URL): Either.Either<URL, string> => {
  let url: URL
  try {
    url = new URL(text, base)
  } catch {
    return Either.left("is not a valid URL")
  }
  return url.protocol === "http:" || url.protocol === "https:"
    ? Either.right(url)
    : Either.left(`must be http: or https:, not ${url.protocol}`)
}

/** The host's IP address when the URL names one directly (`http://10.0.0.1/`, `http://[::1]/`). */
export const ipLiteralOf = (url: URL): string | undefined => {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
  return isIP(host) === 0 ? undefined : host
}

const decode = (text: string) => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** The URL without userinfo: undici refuses userinfo, and its error would repeat the whole URL. */
export const withoutUserinfo = (url: URL): string => {
  if (url.username === "" && url.password === "") return url.href
  const bare = new URL(url.href)
  bare.username = ""
  bare.password = ""
  return bare.href
}

/** The URL's userinfo as an `Authorization` header value (Basic), as curl and browsers send it. */
export const basicCredentialsOf = (url: URL): string | undefined =>
  url.username === "" && url.password === ""
    ? undefined
    : `Basic ${Buffer.from(`${decode(url.username)}:${decode(url.password)}`).toString("base64")}`

/** The last segment of the URL's path, decoded (`/files/report%202024.pdf` → `report 2024.pdf`). */
export const lastPathSegmentOf = (url: URL): string | undefined => {
  const segment = url.pathname.split("/").at(-1)
  return segment === undefined || segment === "" ? undefined : decode(segment)
}
