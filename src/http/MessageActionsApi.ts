import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ChatIdFromInput } from "../domain/Ids.js"
import {
  DeleteScope,
  EditRequest,
  ForwardRequest,
  Message,
  PinRequest,
  PollResults,
  PollVoteRequest,
  PollVoteResult,
  Presence,
  PresenceSubscribeRequest,
  SendResult,
  SetPresenceRequest,
  StarRequest
} from "../domain/Message.js"
import { Authentication } from "./Authentication.js"
import { RequiredRole } from "./Endpoints.js"
import { declaresBacklogRefusal } from "./backlogRefusal.js"

/**
 * The contract's actions on messages already in a chat, and presence (their groups of
 * SwitchboardApi in ./Api.ts). Every one of them may answer 503 (the Store or the media store
 * cannot be reached) and 413 (a body over BODY_MAX_BYTES), declared on SwitchboardApi; 401/403/429
 * come with Authentication.
 */

const sessionPath = Schema.Struct({ sessionId: Schema.String })
const messagePath = Schema.Struct({ sessionId: Schema.String, messageId: Schema.String })
const messageRoute = "/sessions/:sessionId/messages/:messageId"

export class MessageActionsGroup extends HttpApiGroup.make("messageActions")
  .add(
    HttpApiEndpoint.post("forward", `${messageRoute}/forward`).annotate(RequiredRole, "operator")
      .setPath(messagePath)
      .setPayload(ForwardRequest)
      .addSuccess(SendResult, { status: 201 })
      .annotate(OpenApi.Description, "Sends the message again to a chat, marked forwarded: a new message (media copied, not fetched again).")
      .annotate(OpenApi.Transform, declaresBacklogRefusal)
      .annotate(OpenApi.Summary, "Forward a message")
  )
  .add(
    HttpApiEndpoint.put("edit", messageRoute).annotate(RequiredRole, "operator")
      .setPath(messagePath)
      .setPayload(EditRequest)
      .addSuccess(Message)
      .annotate(
        OpenApi.Description,
        "Edits the text (or caption) of a message this session sent, within 15 minutes (409 EDIT_NOT_ALLOWED otherwise). The previous text is kept in `edits`."
      )
      .annotate(OpenApi.Summary, "Edit a sent message")
  )
  .add(
    HttpApiEndpoint.del("remove", messageRoute).annotate(RequiredRole, "operator")
      .setPath(messagePath)
      .setUrlParams(Schema.Struct({ for: Schema.optional(DeleteScope) }))
      .addSuccess(Message)
      .annotate(
        OpenApi.Description,
        "Deletes a message. `for=everyone` (the default for own messages) deletes it in the chat, within about 2 days (409 REVOKE_NOT_ALLOWED otherwise); `for=me` (the default for others' messages) hides it here only."
      )
      .annotate(OpenApi.Summary, "Delete a message")
  )
  .add(
    HttpApiEndpoint.post("star", `${messageRoute}/star`).annotate(RequiredRole, "operator")
      .setPath(messagePath)
      .setPayload(StarRequest)
      .addSuccess(Message)
      .annotate(OpenApi.Summary, "Star or unstar a message")
      .annotate(OpenApi.Description, "Stars ({starred: true}) or unstars the message, on the phone too; answers the message.")
  )
  .add(
    HttpApiEndpoint.post("pin", `${messageRoute}/pin`).annotate(RequiredRole, "operator")
      .setPath(messagePath)
      .setPayload(PinRequest)
      .addSuccess(Message)
      .annotate(OpenApi.Summary, "Pin or unpin a message")
      .annotate(OpenApi.Description, "Pins ({pinned: true}) the message in its chat for 24 hours, 7 days (the default) or 30 days, or unpins it; answers the message.")
  )
  .add(
    HttpApiEndpoint.post("pollVote", "/sessions/:sessionId/messages/poll-vote").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(PollVoteRequest)
      .addSuccess(PollVoteResult)
      .annotate(OpenApi.Description, "Votes on a poll of the chat: the whole choice, replacing any earlier vote; [] withdraws it.")
      .annotate(OpenApi.Summary, "Vote on a poll")
  )
  .add(
    HttpApiEndpoint.get("pollResults", `${messageRoute}/poll`).annotate(RequiredRole, "viewer")
      .setPath(messagePath)
      .addSuccess(PollResults)
      .annotate(OpenApi.Description, "The poll's options with their votes: the latest vote of each voter counts.")
      .annotate(OpenApi.Summary, "Get a poll's results")
  )
  .middleware(Authentication)
{}

export class PresenceGroup extends HttpApiGroup.make("presence")
  .add(
    HttpApiEndpoint.post("set", "/sessions/:sessionId/presence").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(SetPresenceRequest)
      .addSuccess(SetPresenceRequest)
      .annotate(OpenApi.Description, "`{state: online|offline}` for the account, or `{chatId, state: typing|recording|paused}` in one chat.")
      .annotate(OpenApi.Summary, "Set presence")
  )
  .add(
    HttpApiEndpoint.post("subscribe", "/sessions/:sessionId/presence/subscribe").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(PresenceSubscribeRequest)
      .addSuccess(Schema.Struct({ chatId: Schema.String, subscribed: Schema.Literal(true) }))
      .annotate(OpenApi.Description, "Asks to hear the contact's presence: presence.update events follow.")
      .annotate(OpenApi.Summary, "Subscribe to a contact's presence")
  )
  .add(
    HttpApiEndpoint.get("get", "/sessions/:sessionId/presence/:chatId").annotate(RequiredRole, "viewer")
      .setPath(Schema.Struct({ sessionId: Schema.String, chatId: ChatIdFromInput }))
      .addSuccess(Presence)
      .annotate(OpenApi.Description, "The last presence heard of the contact (404 PRESENCE_UNKNOWN before any).")
      .annotate(OpenApi.Summary, "Get a contact's presence")
  )
  .middleware(Authentication)
{}
