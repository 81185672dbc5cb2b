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

/** Every endpoint of the REST contract, read from the API's declaration (so a new one is never missed). */
export const routes: ReadonlyArray<RouteInfo> = (() => {
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
  return found
})()

interface Matcher {
  readonly route: RouteInfo
  readonly pattern: RegExp
  readonly names: ReadonlyArray<string>
  readonly specificity: string
}

const matchers: ReadonlyArray<Matcher> = routes.map((route) => {
  const names: Array<string> = []
  const segments = route.path.split("/").filter((segment) => segment.length > 0)
  const source = segments.map((segment) => {
    if (!segment.startsWith(":")) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    names.push(segment.slice(1))
    return "([^/]+)"
  })
  // Static segments win over parameters at the same place (`batch/:batchId` before `:messageId/media`).
  const specificity = segments.map((segment) => (segment.startsWith(":") ? "1" : "0")).join("")
  return { route, pattern: new RegExp(`^/${source.join("/")}/?$`), names, specificity }
}).sort((a, b) => a.specificity.localeCompare(b.specificity))

/** The endpoint a request is for, with its path parameters; undefined when none is. */
export const matchRoute = (method: string, pathname: string) => {
  for (const matcher of matchers) {
    if (matcher.route.method !== method.toUpperCase()) continue
    const match = matcher.pattern.exec(pathname)
    if (match === null) continue
    const params: Record<string, string> = {}
    matcher.names.forEach((name, index) => {
      params[name] = safeDecode(match[index + 1]!)
    })
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
