import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { RateLimited } from "../domain/Errors.js"

/** The seconds a refusal tells the caller to wait, when it tells (429 SESSION_BACKLOG_FULL does, in `details`). */
const retryAfterOf = (error: unknown): number | undefined => {
  if (!(error instanceof RateLimited)) return undefined
  const details = error.details as { readonly retryAfterSeconds?: unknown } | undefined
  return typeof details?.retryAfterSeconds === "number" ? details.retryAfterSeconds : undefined
}

/**
 * A refusal that says when to come back says it in `Retry-After` too: that is where HTTP
 * clients and their retry policies look.
 */
export const announceRetryAfter = (error: unknown) => {
  const seconds = retryAfterOf(error)
  return seconds === undefined
    ? Effect.void
    : HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(seconds))))
}

/**
 * The OpenAPI declaration of a send operation's 429 SESSION_BACKLOG_FULL (an `OpenApi.Transform`
 * of the operation): the 429 the rate limit declares already, with the `Retry-After` header
 * and what the refusal means.
 */
export const declaresBacklogRefusal = (operation: Record<string, any>): Record<string, any> => {
  const tooMany = operation.responses?.["429"] ?? { description: "RateLimited" }
  return {
    ...operation,
    responses: {
      ...operation.responses,
      "429": {
        ...tooMany,
        description: "RATE_LIMITED (the key's rate limit), or SESSION_BACKLOG_FULL: the session has OUTBOUND_BACKLOG_MAX " +
          "accepted sends waiting to go out; nothing was stored. Send again after Retry-After seconds " +
          "(details: backlog, max, retryAfterSeconds).",
        headers: {
          ...tooMany.headers,
          "Retry-After": {
            description: "seconds to wait before sending again: the sends that must go out first, at the session's pace",
            schema: { type: "integer", minimum: 1 }
          }
        }
      }
    }
  }
}
