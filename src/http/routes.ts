import { HttpApi } from "@effect/platform"
import { SwitchboardApi } from "./Api.js"

/** One endpoint of the contract: its method, its path pattern (`/api/sessions/:sessionId`), whether it needs a key. */
export interface RouteInfo {
  readonly method: string
  readonly path: string
  readonly group: string
  readonly name: string
  readonly authenticated: boolean
}

/**
 * Every endpoint of the REST contract, read from the API's declaration (so a new one is never
 * missed). Read on first use: the API's own modules import this one.
 */
export const allRoutes = (): ReadonlyArray<RouteInfo> => {
  if (known !== undefined) return known
  const found: Array<RouteInfo> = []
  HttpApi.reflect(SwitchboardApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, middleware }) => {
      found.push({
        method: endpoint.method,
        path: endpoint.path,
        group: group.identifier,
        name: endpoint.name,
        authenticated: middleware.size > 0
      })
    }
  })
  known = found
  return found
}
let known: ReadonlyArray<RouteInfo> | undefined

interface Matcher {
  readonly route: RouteInfo
  readonly pattern: RegExp
  readonly names: ReadonlyArray<string>
  readonly specificity: string
}

const compile = (): ReadonlyArray<Matcher> => allRoutes().map((route) => {
  const names: Array<string> = []
  const segments = route.path.split("/").filter((segment) => segment.length > 0)
  const source = segments.map((segment) => {
    if (!segment.startsWith(":")) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    names.push(segment.slice(1))
    return "([^/]+)"
  })
  // Static segments win over parameters at the same place (`batch/:batchId` before `:messageId/media`).
  const specificity = segments.map((segment) => (segment.startsWith(":") ? "1" : "0")).join("")
  return { route, pattern: new RegExp(`^/${source.join("/")}/?$`, "i"), names, specificity }
}).sort((a, b) => a.specificity.localeCompare(b.specificity))
let matchers: ReadonlyArray<Matcher> | undefined

/**
 * The path of a request URL as the router (find-my-way) reads it: the absolute form cut to its
 * path, repeated slashes folded, cut at `?`, `;` or `#`, and escapes decoded but for reserved
 * characters. `undefined` when it cannot be decoded (the router then finds no route).
 */
const routerPath = (url: string) => {
  const path = (url.startsWith("/") ? url : url.replace(/^https?:\/\/.*?\//, "/")).replace(/\/\/+/g, "/")
  const end = path.slice(1).search(/[?;#]/)
  try {
    return decodeURI((end === -1 ? path : path.slice(0, end + 1)).replace(/%25/g, "%2525"))
  } catch {
    return undefined
  }
}

/** The router refuses a path whose parameter is longer than this. */
const MAX_PARAM_LENGTH = 100

/**
 * The endpoint a request URL is for, with its path parameters; undefined when none is. Matched
 * as the router matches (case-insensitive, trailing slash ignored, `..` not resolved), so what
 * the request's wrappers see is what the handler gets.
 */
export const matchRoute = (method: string, url: string) => {
  const path = routerPath(url)
  if (path === undefined) return undefined
  matchers ??= compile()
  for (const matcher of matchers) {
    if (matcher.route.method !== method.toUpperCase()) continue
    const match = matcher.pattern.exec(path)
    if (match === null) continue
    const params: Record<string, string> = {}
    for (const [index, name] of matcher.names.entries()) {
      const value = safeDecode(match[index + 1]!)
      if (value.length > MAX_PARAM_LENGTH) return undefined
      params[name] = value
    }
    return { route: matcher.route, params }
  }
  return undefined
}

const safeDecode = (segment: string) => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}
