import { Option } from "effect"
import type { HttpRequestSample } from "../runtime/Metrics.js"
import type { AnsweredRequest } from "./RequestTracking.js"

/**
 * What the metrics count and time of a request (see `requestEdge`), by method, status and route
 * pattern: the pattern the request matched (`/api/sessions/:sessionId`), never its path, whose
 * ids would make a label without bound; "unmatched" when no route took the request. A request
 * that ended in a defect or an interruption counts with the status its answer was given.
 */
export const requestSample = ({ matched, method, status }: AnsweredRequest, seconds: number): HttpRequestSample => ({
  method,
  route: Option.match(matched, { onNone: () => "unmatched", onSome: ({ endpoint }) => endpoint.path }),
  status,
  seconds
})
