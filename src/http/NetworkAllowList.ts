import { HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Effect } from "effect"
import { toErrorBody } from "../domain/Errors.js"
import type { NetworkList } from "../domain/cidr.js"
import type { EndpointLookup } from "./Endpoints.js"
import { CurrentRequest } from "./RequestTracking.js"

/**
 * `ALLOWED_CIDRS`: callers outside these networks get 403 `IP_NOT_ALLOWED` on every path, health
 * included, before their request is read. The address is the socket's peer, or what a trusted
 * proxy reports (`TRUSTED_PROXIES`). An empty list lets everyone through. A refused request is
 * still looked up (`lookUpEndpoint`), so the audit log and the metrics say which endpoint it was for.
 */
export const networkAllowList = (allowed: NetworkList, lookUpEndpoint: EndpointLookup) =>
<E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | CurrentRequest> =>
  allowed.entries.length === 0
    ? app
    : Effect.flatMap(CurrentRequest, (info) =>
      allowed.contains(info.clientIp)
        ? app
        : Effect.as(
          lookUpEndpoint,
          HttpServerResponse.unsafeJson(
            toErrorBody(403, { code: "IP_NOT_ALLOWED", message: `requests from ${info.clientIp} are not allowed` }),
            { status: 403, headers: { connection: "close" } }
          )
        ))
