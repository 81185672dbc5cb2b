import { SwitchboardApi } from "../../src/http/Api.js"
import { type Endpoint, endpointsOf } from "../../src/http/Endpoints.js"

/** Placeholder values for path parameters: any value reaches the access check, which runs before input is read. */
const placeholders: Record<string, string> = {
  messageId: "0190d5e2-0000-7000-8000-000000000001",
  batchId: "0190d5e2-0000-7000-8000-000000000002",
  webhookId: "0190d5e2-0000-7000-8000-000000000003",
  deliveryId: "0190d5e2-0000-7000-8000-000000000004",
  keyId: "0190d5e2-0000-7000-8000-000000000005",
  groupId: "120363000000000001@g.us",
  channelId: "120363000000000002@newsletter",
  labelId: "1",
  chatId: "15551234567@c.us"
}

/** The route's path with `sessionId` and every other parameter filled in. */
export const concretePath = (route: Endpoint, sessionId: string) =>
  route.path.replace(/:(\w+)/g, (_, name: string) =>
    encodeURIComponent(name === "sessionId" ? sessionId : placeholders[name] ?? `test-${name}`))

export const authenticatedRoutes = () => endpointsOf(SwitchboardApi).filter((route) => route.authenticated)

export const describeRoute = (route: Endpoint) => `${route.method} ${route.path}`

/**
 * Calls a route and reads only its status and error body; the live event stream is closed as
 * soon as its headers arrive.
 */
export const probe = async (
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>
): Promise<{ readonly status: number; readonly code: string | undefined }> => {
  const abort = new AbortController()
  const body = method === "GET" || method === "DELETE" ? undefined : "{}"
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    signal: abort.signal,
    ...(body === undefined ? {} : { body })
  })
  if ((response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    abort.abort()
    return { status: response.status, code: undefined }
  }
  const text = await response.text()
  let code: string | undefined
  try {
    code = (JSON.parse(text) as { readonly code?: string }).code
  } catch {
    code = undefined
  }
  return { status: response.status, code }
}
