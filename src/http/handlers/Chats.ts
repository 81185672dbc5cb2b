import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Chats } from "../../services/Chats.js"
import { SwitchboardApi } from "../Api.js"
import { answeringStoreOutage } from "../ErrorResponses.js"
import { listed } from "../Pagination.js"

export const ChatsHandlers = HttpApiBuilder.group(SwitchboardApi, "chats", (handlers) =>
  Effect.gen(function*() {
    const chats = yield* Chats
    return handlers
      .handle("list", answeringStoreOutage(({ path, urlParams: { limit, page: pageNumber, ...filter } }) =>
        listed({ limit, page: pageNumber }, (page) => chats.list(path.sessionId, filter, page))))
      .handle("get", answeringStoreOutage(({ path }) => chats.get(path.sessionId, path.chatId)))
      .handle("archive", answeringStoreOutage(({ path, payload }) => chats.archive(path.sessionId, path.chatId, payload.archived)))
      .handle("pin", answeringStoreOutage(({ path, payload }) => chats.pin(path.sessionId, path.chatId, payload.pinned)))
      .handle("mute", answeringStoreOutage(({ path, payload }) => chats.mute(path.sessionId, path.chatId, payload)))
      .handle("markUnread", answeringStoreOutage(({ path }) => chats.markUnread(path.sessionId, path.chatId)))
      .handle("remove", answeringStoreOutage(({ path }) => chats.remove(path.sessionId, path.chatId)))
      .handle("messages", answeringStoreOutage(({ path, urlParams }) =>
        listed(urlParams, (page) => chats.messages(path.sessionId, path.chatId, page))))
      .handle("history", answeringStoreOutage(({ path, payload }) => chats.requestHistory(path.sessionId, path.chatId, payload.count)))
  }))
