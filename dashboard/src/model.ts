/**
 * The shapes the REST API sends and takes (src/http/Api.ts, served as OpenAPI at /api/docs), taken from the server's own schemas on
 * their wire side (`Encoded`: the JSON), and its refusals as `ApiError`. A field the server
 * renames or retypes fails the dashboard's type check rather than the page.
 *
 * Imports of the server are type-only: none of its code (nor effect) reaches the browser. Only
 * domain modules free of Node imports can be named here: this type check has no Node types.
 */
import type * as ApiKeys from "../../src/domain/ApiKey.js"
import type * as Audit from "../../src/domain/Audit.js"
import type * as Calls from "../../src/domain/Call.js"
import type * as Chats from "../../src/domain/Chat.js"
import type * as Contacts from "../../src/domain/Contact.js"
import type * as Errors from "../../src/domain/Errors.js"
import type * as Events from "../../src/domain/Events.js"
import type * as Messages from "../../src/domain/Message.js"
import type * as Pages from "../../src/domain/Pagination.js"
import type * as Profiles from "../../src/domain/Profile.js"
import type * as Sessions from "../../src/domain/Session.js"
import type * as SessionSettingsSchemas from "../../src/domain/SessionSettings.js"
import type * as Webhooks from "../../src/domain/Webhook.js"

export type SessionStatus = typeof Sessions.SessionStatus.Encoded
export type Session = typeof Sessions.Session.Encoded
export type CreateSessionRequest = typeof Sessions.CreateSessionRequest.Encoded
export type QrCode = typeof Sessions.QrCode.Encoded
export type PairingCodeRequest = typeof Sessions.PairingCodeRequest.Encoded
export type PairingCode = typeof Sessions.PairingCode.Encoded
export type Me = typeof Sessions.Me.Encoded
export type ProxyView = typeof Sessions.ProxyView.Encoded
export type SetProxyRequest = typeof Sessions.SetProxyRequest.Encoded

// Keyed by the server's type: a status it adds or renames fails the type check here.
const statusesInOrder: Record<SessionStatus, true> = {
  created: true, initializing: true, qr_ready: true, authenticating: true, ready: true,
  disconnected: true, stopped: true, logged_out: true, failed: true
}

/** Every status, in the server's order. */
export const sessionStatuses = Object.keys(statusesInOrder) as ReadonlyArray<SessionStatus>

export type MediaKind = typeof Messages.MediaKind.Encoded
export type Message = typeof Messages.Message.Encoded
export type SendTextRequest = typeof Messages.SendTextRequest.Encoded
export type SendMediaRequest = typeof Messages.SendMediaRequest.Encoded
export type SendLocationRequest = typeof Messages.SendLocationRequest.Encoded
export type SendContactRequest = typeof Messages.SendContactRequest.Encoded
export type ContactInput = typeof Messages.ContactInput.Encoded
export type SendPollRequest = typeof Messages.SendPollRequest.Encoded
export type TypingMs = typeof Messages.TypingMs.Encoded
export type Location = typeof Messages.Location.Encoded
export type ContactCard = typeof Messages.ContactCard.Encoded
export type PollResults = typeof Messages.PollResults.Encoded
export type LinkPreview = typeof Messages.LinkPreview.Encoded
export type SendResult = typeof Messages.SendResult.Encoded

export type ChatType = typeof Chats.ChatType.Encoded
export type Chat = typeof Chats.Chat.Encoded
export type ArchiveChatRequest = typeof Chats.ArchiveChatRequest.Encoded
export type PinChatRequest = typeof Chats.PinChatRequest.Encoded
export type MuteChatRequest = typeof Chats.MuteChatRequest.Encoded
export type HistoryRequest = typeof Chats.HistoryRequest.Encoded
export type HistoryRequested = typeof Chats.HistoryRequested.Encoded

export type Profile = typeof Profiles.Profile.Encoded
export type ProfileNameRequest = typeof Profiles.ProfileNameRequest.Encoded
export type ProfileAboutRequest = typeof Profiles.ProfileAboutRequest.Encoded
export type ContactDetails = typeof Contacts.ContactDetails.Encoded
export type LidLookup = typeof Contacts.LidLookup.Encoded

export type CallStatus = typeof Calls.CallStatus.Encoded
export type Call = typeof Calls.Call.Encoded

export type HistorySync = typeof SessionSettingsSchemas.HistorySync.Encoded
export type SessionSettings = typeof SessionSettingsSchemas.SessionSettings.Encoded
export type UpdateSessionSettingsRequest = typeof SessionSettingsSchemas.UpdateSessionSettingsRequest.Encoded

// Keyed by the server's type: a choice it adds or renames fails the type check here.
const historySyncLabels: Record<HistorySync, string> = {
  off: "Off: nothing from before linking",
  recent: "Recent: what the phone sends by default",
  full: "Full: everything the phone offers"
}

/** Every history-sync choice with what it means, in the server's order. */
export const historySyncChoices = Object.entries(historySyncLabels) as ReadonlyArray<[HistorySync, string]>

export type Webhook = typeof Webhooks.Webhook.Encoded
export type CreatedWebhook = typeof Webhooks.CreatedWebhook.Encoded
export type WebhookInput = typeof Webhooks.CreateWebhookRequest.Encoded
export type WebhookUpdate = typeof Webhooks.UpdateWebhookRequest.Encoded
export type Delivery = typeof Webhooks.Delivery.Encoded
export type TestResult = typeof Webhooks.TestResult.Encoded

export type Role = typeof ApiKeys.Role.Encoded
export type ApiKey = typeof ApiKeys.ApiKey.Encoded
export type CreatedApiKey = typeof ApiKeys.CreatedApiKey.Encoded

/**
 * The body of creating a key, in the listed key's fields: its own schema (ApiKeyRequests.ts)
 * checks networks with node:net, so this type check cannot read it.
 */
export type ApiKeyInput = Pick<ApiKey, "name" | "role"> & Partial<Pick<ApiKey, "allowedSessions" | "allowedIps" | "expiresAt">>

export type AuditRecord = typeof Audit.AuditRecord.Encoded

/** The envelope of every event (webhook body, SSE `data:`). */
export type DomainEvent = typeof Events.DomainEventEnvelope.Encoded
export type EventKind = typeof Events.EventKind.Encoded

/** The kinds a webhook can be set to listen to: all but the test event, which goes only where asked. */
type SubscribableKind = Exclude<EventKind, "webhook.test">

// Keyed by the server's type: a kind it adds or renames fails the type check here.
const kindsInOrder: Record<SubscribableKind, true> = {
  "session.status": true, "session.qr": true,
  "message.received": true, "message.sent": true, "message.ack": true, "message.failed": true,
  "message.reaction": true, "message.revoked": true, "message.edited": true,
  "poll.vote": true, "presence.update": true,
  "group.join": true, "group.leave": true, "group.update": true, "group.participants": true,
  "label.update": true,
  "chat.update": true, "contact.update": true, "status.received": true,
  "call.received": true, "call.update": true, "session.history": true, "group.request": true,
  "session.unstable": true
}

export const eventKinds = Object.keys(kindsInOrder) as ReadonlyArray<SubscribableKind>

export type Pagination = Pages.PaginationMeta

/** A list answer's body: `{data: [...]}` without page/limit, `{data: {items, pagination}}` with them. */
export type ListBody<T> = Pages.ListBody<T>

/** One page of a list. */
export type PageOf<T> = Exclude<ListBody<T>["data"], ReadonlyArray<T>>

/** The API's error body: `{statusCode, error, code, message, details?}`. */
export type ErrorBody = typeof Errors.ErrorBody.Encoded

/** A refusal of the API (or no answer at all: `statusCode` 0, code `NETWORK_ERROR`). */
export class ApiError extends Error {
  readonly statusCode: number
  readonly error: string
  readonly code: string
  readonly details: unknown

  constructor(body: ErrorBody) {
    super(body.message)
    this.name = "ApiError"
    this.statusCode = body.statusCode
    this.error = body.error
    this.code = body.code
    this.details = body.details
  }
}

/** Anything thrown, as an ApiError, so every failure is shown the same way. */
export const toApiError = (cause: unknown): ApiError => {
  if (cause instanceof ApiError) return cause
  const message = cause instanceof Error ? cause.message : String(cause)
  return new ApiError({ statusCode: 0, error: "Error", code: "CLIENT_ERROR", message })
}
