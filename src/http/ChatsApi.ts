import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  ArchiveChatRequest,
  Chat,
  ChatListFilter,
  HistoryRequest,
  HistoryRequested,
  MuteChatRequest,
  PinChatRequest
} from "../domain/Chat.js"
import { ChatIdFromInput } from "../domain/Ids.js"
import { Message } from "../domain/Message.js"
import { Authentication } from "./Authentication.js"
import { RequiredRole } from "./Endpoints.js"
import { ListBody, PageParams } from "./Pagination.js"

/**
 * The account's chat list (its group of SwitchboardApi in ./Api.ts). Every operation may answer
 * 503 (the Store cannot be reached) and 413 (a body over BODY_MAX_BYTES), declared with the
 * others on SwitchboardApi (404 CHAT_NOT_FOUND, the engine's refusals); 401/403/429 come with
 * Authentication.
 */

const session = { sessionId: Schema.String }
const chatPath = Schema.Struct({ ...session, chatId: ChatIdFromInput })
const chatsRoute = "/sessions/:sessionId/chats"
const chatRoute = `${chatsRoute}/:chatId`

const change = <const Name extends string>(name: Name, route: string, description: string) =>
  HttpApiEndpoint.post(name, `${chatRoute}/${route}`).annotate(RequiredRole, "operator")
    .setPath(chatPath)
    .addSuccess(Chat)
    .annotate(OpenApi.Description, description)

export class ChatsGroup extends HttpApiGroup.make("chats")
  .add(
    HttpApiEndpoint.get("list", chatsRoute).annotate(RequiredRole, "viewer")
      .setPath(Schema.Struct(session))
      .setUrlParams(Schema.Struct({ ...PageParams, ...ChatListFilter.fields }))
      .addSuccess(ListBody(Chat))
      .annotate(OpenApi.Description, "The chat list, most recent activity first; filter by archived, unread=true, type or labelId.")
      .annotate(OpenApi.Summary, "List chats")
  )
  .add(
    HttpApiEndpoint.get("get", chatRoute).annotate(RequiredRole, "viewer")
      .setPath(chatPath)
      .addSuccess(Chat)
      .annotate(OpenApi.Description, "One chat with its newest message, unread count, flags and labels (404 CHAT_NOT_FOUND).")
      .annotate(OpenApi.Summary, "Get a chat")
  )
  .add(
    change("archive", "archive", "Archives ({archived: true}) or unarchives the chat, on the phone too.").setPayload(ArchiveChatRequest)
      .annotate(OpenApi.Summary, "Archive or unarchive a chat")
  )
  .add(
    change("pin", "pin", "Pins ({pinned: true}) or unpins the chat.").setPayload(PinChatRequest)
      .annotate(OpenApi.Summary, "Pin or unpin a chat")
  )
  .add(
    change("mute", "mute", "Mutes the chat until a moment ({until: ISO}), for some hours ({hours}), or unmutes it ({until: null}).").setPayload(MuteChatRequest)
      .annotate(OpenApi.Summary, "Mute or unmute a chat")
  )
  .add(
    change("markUnread", "unread", "Marks the chat unread (unreadCount -1) until it is read (POST …/messages/read).")
      .annotate(OpenApi.Summary, "Mark a chat unread")
  )
  .add(
    HttpApiEndpoint.del("remove", chatRoute).annotate(RequiredRole, "operator")
      .setPath(chatPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Description, "Clears the chat and removes it from the account's list (its messages and their media too).")
      .annotate(OpenApi.Summary, "Delete a chat")
  )
  .add(
    HttpApiEndpoint.get("messages", `${chatRoute}/messages`).annotate(RequiredRole, "viewer")
      .setPath(chatPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ListBody(Message))
      .annotate(OpenApi.Description, "The chat's messages, newest first (as GET …/messages?chatId=).")
      .annotate(OpenApi.Summary, "List a chat's messages")
  )
  .add(
    HttpApiEndpoint.post("history", `${chatRoute}/history`).annotate(RequiredRole, "operator")
      .setPath(chatPath)
      .setPayload(HistoryRequest)
      .addSuccess(HistoryRequested, { status: 202 })
      .annotate(
        OpenApi.Description,
        "Asks the phone for up to count (1–500) messages older than the oldest held; they arrive as source \"history\", announced by one session.history event."
      )
      .annotate(OpenApi.Summary, "Fetch older history")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "The account's chats: kept from every message in or out, reads, and the phone's own changes.")
{}
