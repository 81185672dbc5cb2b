import { HttpApiBuilder } from "@effect/platform"
import { DateTime, Effect } from "effect"
import { Messaging } from "../../services/Messaging.js"
import { toListBody } from "../../services/Pagination.js"
import { SwitchboardApi } from "../Api.js"
import { pageRequest } from "../Pagination.js"

export const MessagesHandlers = HttpApiBuilder.group(SwitchboardApi, "messages", (handlers) =>
  Effect.gen(function*() {
    const messaging = yield* Messaging
    return handlers
      .handle("sendText", ({ path, payload }) => messaging.sendText(path.sessionId, payload))
      .handle("sendBulk", ({ path, payload }) => messaging.sendBulk(path.sessionId, payload))
      .handle("getBatch", ({ path }) => messaging.getBatch(path.sessionId, path.batchId))
      .handle("cancelBatch", ({ path }) => messaging.cancelBatch(path.sessionId, path.batchId))
      .handle("markRead", ({ path, payload }) => messaging.markRead(path.sessionId, payload))
      .handle("list", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const page = yield* pageRequest(urlParams)
          const { chatId, direction, status, since, until } = urlParams
          const filter = {
            chatId,
            direction,
            status,
            since: since && DateTime.formatIso(since),
            until: until && DateTime.formatIso(until)
          }
          return toListBody(page, yield* messaging.list(path.sessionId, filter, page))
        }))
      .handle("get", ({ path }) => messaging.get(path.sessionId, path.messageId))
  }))
