import { HttpServerResponse } from "@effect/platform"
import { toErrorBody } from "../domain/Errors.js"
import type { NetworkList } from "../domain/cidr.js"

/**
 * `ALLOWED_CIDRS`: callers outside these networks get 403 `IP_NOT_ALLOWED` on every path, health
 * included, before their request is read (see `requestEdge`). The address is the socket's peer,
 * or what a trusted proxy reports (`TRUSTED_PROXIES`). An empty list lets everyone through.
 * Undefined when the caller may go on.
 */
export const addressRefusal = (allowed: NetworkList, clientIp: string): HttpServerResponse.HttpServerResponse | undefined =>
  allowed.entries.length === 0 || allowed.contains(clientIp)
    ? undefined
    : HttpServerResponse.unsafeJson(
      toErrorBody(403, { code: "IP_NOT_ALLOWED", message: `requests from ${clientIp} are not allowed` }),
      { status: 403, headers: { connection: "close" } }
    )
