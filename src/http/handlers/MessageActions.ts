import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { MessageActions } from "../../services/MessageActions.js"
import { Messaging } from "../../services/Messaging.js"
import { PresenceTracker } from "../../services/PresenceTracker.js"
import { SwitchboardApi } from "../Api.js"
import { answeringStoreOutage } from "../ErrorResponses.js"

export const MessageActionsHandlers = HttpApiBuilder.group(SwitchboardApi, "messageActions", (handlers) =>
  Effect.gen(function*() {
    const actions = yield* MessageActions
    const messaging = yield* Messaging
    return handlers
      .handle("forward", answeringStoreOutage(({ path, payload }) => messaging.forward(path.sessionId, path.messageId, payload)))
      .handle("edit", answeringStoreOutage(({ path, payload }) => actions.edit(path.sessionId, path.messageId, payload.text)))
      .handle("remove", answeringStoreOutage(({ path, urlParams }) => actions.remove(path.sessionId, path.messageId, urlParams.for)))
      .handle("star", answeringStoreOutage(({ path, payload }) => actions.star(path.sessionId, path.messageId, payload.starred)))
      .handle("pin", answeringStoreOutage(({ path, payload }) => actions.pin(path.sessionId, path.messageId, payload)))
      .handle("pollVote", answeringStoreOutage(({ path, payload }) => actions.votePoll(path.sessionId, payload)))
      .handle("pollResults", answeringStoreOutage(({ path }) => actions.pollResults(path.sessionId, path.messageId)))
  }))

export const PresenceHandlers = HttpApiBuilder.group(SwitchboardApi, "presence", (handlers) =>
  Effect.gen(function*() {
    const presence = yield* PresenceTracker
    return handlers
      .handle("set", answeringStoreOutage(({ path, payload }) => presence.set(path.sessionId, payload)))
      .handle("subscribe", answeringStoreOutage(({ path, payload }) => presence.subscribe(path.sessionId, payload.chatId)))
      .handle("get", answeringStoreOutage(({ path }) => presence.get(path.sessionId, path.chatId)))
  }))
