import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { HealthReport } from "../domain/Health.js"
import { Conflict, EngineFailure, EngineTimeout, Forbidden, InternalError, NotSupported, NotFound, PayloadTooLarge, ServiceUnavailable, UnsupportedMediaType, ValidationFailed } from "../domain/Errors.js"
import { wireError } from "./wireError.js"
import { declaresBacklogRefusal } from "./backlogRefusal.js"
import { answersAlso, answersBytes, completeDocument } from "./openApiDocument.js"
import {
  Batch,
  BatchAccepted,
  MarkReadRequest,
  MarkReadResult,
  Message,
  MessageDirection,
  MessageStatus,
  ReactRequest,
  ReactResult,
  SendBulkRequest,
  SendContactRequest,
  SendLocationRequest,
  SendPollRequest,
  SendResult,
  SendTextRequest
} from "../domain/Message.js"
import {
  CreateSessionRequest,
  Me,
  PairingCode,
  PairingCodeRequest,
  ProxyView,
  QrCode,
  Session,
  SessionStatus,
  SetProxyRequest
} from "../domain/Session.js"
import { Authentication } from "./Authentication.js"
import { RequiredRole } from "./Endpoints.js"
import { ChatsGroup } from "./ChatsApi.js"
import { ChannelsGroup, ContactsGroup, GroupsGroup, LabelsGroup } from "./DirectoryApi.js"
import { SendMediaPayload } from "./mediaForms.js"
import { MetricsGroup } from "./MetricsApi.js"
import { ApiKeysGroup, AuditGroup } from "./SecurityApi.js"
import { LiveEventsGroup, WebhooksGroup } from "./WebhooksApi.js"
import { ListBody, PageParams } from "./Pagination.js"
import { MessageActionsGroup, PresenceGroup } from "./MessageActionsApi.js"
import { ProfileGroup } from "./ProfileApi.js"
import { CallsGroup, SandboxGroup, SettingsGroup, StatusGroup } from "./StatusCallsApi.js"

/**
 * The REST contract, declared apart from its handlers. Typed clients
 * (`HttpApiClient.make(SwitchboardApi)`) and the OpenAPI document served at /api/docs come
 * from the same value.
 */

export { Authentication }

const sessionPath = Schema.Struct({ sessionId: Schema.String })
const messagePath = Schema.Struct({ sessionId: Schema.String, messageId: Schema.String })
const batchPath = Schema.Struct({ sessionId: Schema.String, batchId: Schema.String })

export class HealthGroup extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health").addSuccess(HealthReport).annotate(OpenApi.Identifier, "health.get")
      .annotate(OpenApi.Summary, "Health report")
      .annotate(OpenApi.Description, "The gateway's status (ok or degraded), version, uptime, the state of each dependency (database, cache, media store) and the sessions still being restored. No key needed.")
  )
  .add(
    HttpApiEndpoint.get("live", "/health/live").addSuccess(Schema.Struct({ status: Schema.Literal("ok") }))
      .annotate(OpenApi.Summary, "Liveness probe")
      .annotate(OpenApi.Description, "Answers 200 while the process runs, even while it drains. No key needed.")
  )
  .add(
    HttpApiEndpoint.get("ready", "/health/ready")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ready") }))
      .annotate(OpenApi.Summary, "Readiness probe")
      .annotate(OpenApi.Description, "200 when every dependency answers; 503 SERVICE_UNAVAILABLE while degraded or shutting down, so balancers stop sending. No key needed.")
  )
  .annotate(OpenApi.Description, "Liveness and readiness; no key needed.")
{}

const PngImage = Schema.Uint8ArrayFromSelf.pipe(HttpApiSchema.withEncoding({ kind: "Uint8Array", contentType: "image/png" }))

export class SessionsGroup extends HttpApiGroup.make("sessions")
  .add(
    HttpApiEndpoint.post("create", "/sessions").annotate(RequiredRole, "operator").setPayload(CreateSessionRequest).addSuccess(Session, { status: 201 })
      .annotate(OpenApi.Summary, "Create a session")
      .annotate(OpenApi.Description, "Creates a session (one WhatsApp account) with a unique name, optionally behind a proxy; autoStart starts it at once. 409 SESSION_NAME_TAKEN when the name is in use.")
  )
  .add(
    HttpApiEndpoint.get("list", "/sessions").annotate(RequiredRole, "viewer")
      .setUrlParams(Schema.Struct({ ...PageParams, status: Schema.optional(SessionStatus) }))
      .addSuccess(ListBody(Session))
      .annotate(OpenApi.Summary, "List sessions")
      .annotate(OpenApi.Description, "The sessions the key may see, filtered by status; page and limit switch pagination on.")
  )
  .add(
    HttpApiEndpoint.get("get", "/sessions/:sessionId").annotate(RequiredRole, "viewer").setPath(sessionPath).addSuccess(Session)
      .annotate(OpenApi.Summary, "Get a session")
      .annotate(OpenApi.Description, "One session: its status, phone, push name, proxy (password redacted) and last error.")
  )
  .add(
    HttpApiEndpoint.del("remove", "/sessions/:sessionId").annotate(RequiredRole, "operator").setPath(sessionPath).addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete a session")
      .annotate(OpenApi.Description, "Stops the session, unlinks it and removes its data.")
  )
  .add(
    HttpApiEndpoint.post("start", "/sessions/:sessionId/start").annotate(RequiredRole, "operator").setPath(sessionPath).addSuccess(Session)
      .annotate(OpenApi.Summary, "Start a session")
      .annotate(OpenApi.Description, "Connects the session: a new one shows a QR (status qr_ready), a linked one reconnects. Idempotent; answers once the session took the command.")
  )
  .add(
    HttpApiEndpoint.post("stop", "/sessions/:sessionId/stop").annotate(RequiredRole, "operator").setPath(sessionPath).addSuccess(Session)
      .annotate(OpenApi.Summary, "Stop a session")
      .annotate(OpenApi.Description, "Disconnects the session and keeps its link (status stopped). Idempotent.")
  )
  .add(
    HttpApiEndpoint.post("restart", "/sessions/:sessionId/restart").annotate(RequiredRole, "operator").setPath(sessionPath).addSuccess(Session)
      .annotate(OpenApi.Summary, "Restart a session")
      .annotate(OpenApi.Description, "Stops and starts the session again, e.g. to apply a new proxy or settings now. Idempotent.")
  )
  .add(
    HttpApiEndpoint.post("logout", "/sessions/:sessionId/logout").annotate(RequiredRole, "operator").setPath(sessionPath).addSuccess(Session)
      .annotate(OpenApi.Summary, "Log a session out")
      .annotate(OpenApi.Description, "Unlinks the account from the phone and wipes its credentials (status logged_out); starting it again shows a new QR. Idempotent.")
  )
  .add(
    HttpApiEndpoint.get("qr", "/sessions/:sessionId/qr").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setUrlParams(Schema.Struct({ format: Schema.optional(Schema.Literal("json", "png")) }))
      .addSuccess(QrCode)
      .addSuccess(PngImage)
      .annotate(OpenApi.Transform, answersAlso(200, "image/png"))
      .annotate(OpenApi.Summary, "Get the linking QR")
      .annotate(OpenApi.Description, "The QR to scan with the phone, as JSON with a data-URL image, or with format=png the PNG itself. 409 SESSION_NOT_READY when the session is not qr_ready.")
  )
  .add(
    HttpApiEndpoint.post("pairingCode", "/sessions/:sessionId/pairing-code").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(PairingCodeRequest)
      .addSuccess(PairingCode)
      .annotate(OpenApi.Summary, "Request a pairing code")
      .annotate(OpenApi.Description, "Links by phone number instead of a QR: answers the code to type on the phone (Linked devices, link with phone number).")
  )
  .add(
    HttpApiEndpoint.get("me", "/sessions/:sessionId/me").annotate(RequiredRole, "viewer").setPath(sessionPath).addSuccess(Me)
      .annotate(OpenApi.Summary, "Get the linked account")
      .annotate(OpenApi.Description, "The linked account's id, phone, LID and push name; 409 when the session is not linked.")
  )
  .add(
    HttpApiEndpoint.get("getProxy", "/sessions/:sessionId/proxy").annotate(RequiredRole, "viewer").setPath(sessionPath).addSuccess(Schema.NullOr(ProxyView))
      .annotate(OpenApi.Summary, "Get the session's proxy")
      .annotate(OpenApi.Description, "The proxy the session connects through (password redacted), or null for a direct connection.")
  )
  .add(
    HttpApiEndpoint.put("setProxy", "/sessions/:sessionId/proxy").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(SetProxyRequest)
      .addSuccess(Schema.NullOr(ProxyView))
      .annotate(OpenApi.Summary, "Set the session's proxy")
      .annotate(OpenApi.Description, "Sets an http(s):// or socks5:// proxy, or null for none; used from the session's next connect on.")
  )
  .middleware(Authentication)
{}

/** The four media sends share one shape: JSON (url or base64) or multipart, 201 when stored and queued. */
const mediaSend = <const Name extends string>(name: Name, path: `/sessions/:sessionId/messages/send-${string}`, what: string) =>
  HttpApiEndpoint.post(name, path).annotate(RequiredRole, "operator")
    .setPath(sessionPath)
    .setPayload(SendMediaPayload)
    .addSuccess(SendResult, { status: 201 })
    .addError(wireError(UnsupportedMediaType))
    .annotate(OpenApi.Description, `Sends ${what}. The type is told from the bytes; MEDIA_MAX_BYTES caps the size (413).`)
    .annotate(OpenApi.Transform, declaresBacklogRefusal)

/** A send whose body is JSON only: 201 when stored and queued. */
const contentSend = <const Name extends string, A, I>(
  name: Name,
  path: `/sessions/:sessionId/messages/send-${string}`,
  payload: Schema.Schema<A, I>,
  what: string
) =>
  HttpApiEndpoint.post(name, path).annotate(RequiredRole, "operator")
    .setPath(sessionPath)
    .setPayload(payload)
    .addSuccess(SendResult, { status: 201 })
    .annotate(OpenApi.Description, `Sends ${what}.`)
    .annotate(OpenApi.Transform, declaresBacklogRefusal)

const AnyBytes = Schema.Uint8ArrayFromSelf.pipe(
  HttpApiSchema.withEncoding({ kind: "Uint8Array", contentType: "application/octet-stream" })
)

export class MessagesGroup extends HttpApiGroup.make("messages")
  .add(
    HttpApiEndpoint.post("sendText", "/sessions/:sessionId/messages/send-text").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(SendTextRequest)
      .addSuccess(SendResult, { status: 201 })
      .annotate(OpenApi.Transform, declaresBacklogRefusal)
      .annotate(OpenApi.Summary, "Send a text message")
      .annotate(OpenApi.Description, "Stores and queues a text message, optionally quoting one and mentioning people. 201 means stored and queued, not delivered: the status and message.ack events follow. 409 SESSION_NOT_READY unless the session is ready or disconnected.")
  )
  .add(
    mediaSend("sendImage", "/sessions/:sessionId/messages/send-image", "an image (JPEG, PNG or WebP)")
      .annotate(OpenApi.Summary, "Send an image")
  )
  .add(
    mediaSend("sendVideo", "/sessions/:sessionId/messages/send-video", "a video (MP4 or 3GP)")
      .annotate(OpenApi.Summary, "Send a video")
  )
  .add(
    mediaSend("sendAudio", "/sessions/:sessionId/messages/send-audio", "an audio, or a voice note with ptt")
      .annotate(OpenApi.Summary, "Send an audio or voice note")
  )
  .add(
    mediaSend("sendDocument", "/sessions/:sessionId/messages/send-document", "a document of any type")
      .annotate(OpenApi.Summary, "Send a document")
  )
  .add(
    mediaSend(
      "sendSticker",
      "/sessions/:sessionId/messages/send-sticker",
      "a sticker: a WebP as it is, or a PNG, JPEG or GIF converted to a 512×512 WebP"
    )
      .annotate(OpenApi.Summary, "Send a sticker")
  )
  .add(
    contentSend("sendLocation", "/sessions/:sessionId/messages/send-location", SendLocationRequest, "a location pin")
      .annotate(OpenApi.Summary, "Send a location")
  )
  .add(
    contentSend(
      "sendContact",
      "/sessions/:sessionId/messages/send-contact",
      SendContactRequest,
      "1 to 20 contact cards; the vCards are built from the fields"
    )
      .annotate(OpenApi.Summary, "Send contact cards")
  )
  .add(
    contentSend(
      "sendPoll",
      "/sessions/:sessionId/messages/send-poll",
      SendPollRequest,
      "a poll of 2 to 12 unique options (selectableCount: how many a voter may pick, default 1); votes come as poll.vote events"
    )
      .annotate(OpenApi.Summary, "Send a poll")
  )
  .add(
    HttpApiEndpoint.post("react", "/sessions/:sessionId/messages/react").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(ReactRequest)
      .addSuccess(ReactResult)
      .annotate(OpenApi.Summary, "React to a message")
      .annotate(OpenApi.Description, "Sets the session's reaction to a message of the chat; an empty emoji takes it back.")
  )
  .add(
    HttpApiEndpoint.post("sendBulk", "/sessions/:sessionId/messages/send-bulk").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(SendBulkRequest)
      .addSuccess(BatchAccepted, { status: 202 })
      .addError(wireError(UnsupportedMediaType))
      .annotate(OpenApi.Transform, declaresBacklogRefusal)
      .annotate(OpenApi.Summary, "Send messages in bulk")
      .annotate(OpenApi.Description, "Accepts 1 to 100 sends (text or media) as one batch, sent in order at the session's pace; answers the batch id to follow it with.")
  )
  .add(
    HttpApiEndpoint.get("getBatch", "/sessions/:sessionId/messages/batch/:batchId").annotate(RequiredRole, "viewer").setPath(batchPath).addSuccess(Batch)
      .annotate(OpenApi.Summary, "Get a bulk batch")
      .annotate(OpenApi.Description, "The batch's status and counts (sent, failed, pending) with its items.")
  )
  .add(
    HttpApiEndpoint.post("cancelBatch", "/sessions/:sessionId/messages/batch/:batchId/cancel").annotate(RequiredRole, "operator").setPath(batchPath).addSuccess(Batch)
      .annotate(OpenApi.Summary, "Cancel a bulk batch")
      .annotate(OpenApi.Description, "Cancels the batch's sends that have not gone out yet; answers the batch.")
  )
  .add(
    HttpApiEndpoint.post("markRead", "/sessions/:sessionId/messages/read").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(MarkReadRequest)
      .addSuccess(MarkReadResult)
      .annotate(OpenApi.Summary, "Mark messages read")
      .annotate(OpenApi.Description, "Sends read receipts for the given messages of the chat, or for all its unread ones; answers how many were marked.")
  )
  .add(
    HttpApiEndpoint.get("list", "/sessions/:sessionId/messages").annotate(RequiredRole, "viewer")
      .setPath(sessionPath)
      .setUrlParams(Schema.Struct({
        ...PageParams,
        chatId: Schema.optional(Schema.String),
        direction: Schema.optional(MessageDirection),
        status: Schema.optional(MessageStatus),
        since: Schema.optional(Schema.DateTimeUtc),
        until: Schema.optional(Schema.DateTimeUtc)
      }))
      .addSuccess(ListBody(Message))
      .annotate(OpenApi.Summary, "List messages")
      .annotate(OpenApi.Description, "The session's messages, newest first, filtered by chat, direction, status and time.")
  )
  .add(
    HttpApiEndpoint.get("get", "/sessions/:sessionId/messages/:messageId").annotate(RequiredRole, "viewer").setPath(messagePath).addSuccess(Message)
      .annotate(OpenApi.Summary, "Get a message")
      .annotate(OpenApi.Description, "One message with its status history, reactions and media description.")
  )
  .add(
    HttpApiEndpoint.get("getMedia", "/sessions/:sessionId/messages/:messageId/media").annotate(RequiredRole, "viewer")
      .setPath(messagePath)
      .addSuccess(AnyBytes)
      .annotate(OpenApi.Description, "The media's bytes, with its own content type.")
      .annotate(OpenApi.Transform, answersBytes(200))
      .annotate(OpenApi.Summary, "Download a message's media")
  )
  .middleware(Authentication)
{}

export class SwitchboardApi extends HttpApi.make("switchboard")
  .add(HealthGroup)
  .add(SessionsGroup)
  .add(MessagesGroup)
  .add(MessageActionsGroup)
  .add(PresenceGroup)
  .add(GroupsGroup)
  .add(ChannelsGroup)
  .add(LabelsGroup)
  .add(ContactsGroup)
  .add(ChatsGroup)
  .add(ProfileGroup)
  .add(WebhooksGroup)
  .add(LiveEventsGroup)
  .add(MetricsGroup)
  .add(ApiKeysGroup)
  .add(AuditGroup)
  .add(SettingsGroup)
  .add(StatusGroup)
  .add(CallsGroup)
  .add(SandboxGroup)
  .addError(wireError(ValidationFailed))
  .addError(wireError(NotFound))
  .addError(wireError(Conflict))
  .addError(wireError(Forbidden))
  .addError(wireError(NotSupported))
  .addError(wireError(EngineFailure))
  .addError(wireError(EngineTimeout))
  .addError(wireError(InternalError))
  // Any request may meet a drain or an outage of the Store; any body may be over its cap
  // (the document keeps 413 to the operations that take one: openApiDocument.ts).
  .addError(wireError(ServiceUnavailable))
  .addError(wireError(PayloadTooLarge))
  .prefix("/api")
  .annotate(OpenApi.Title, "Switchboard")
  .annotate(OpenApi.Version, "0.1.0")
  .annotate(OpenApi.Description, "Self-hosted WhatsApp HTTP gateway. Every call except health carries X-API-Key.")
  // relative: the document works wherever the gateway is served (paths carry the /api prefix)
  .annotate(OpenApi.Servers, [{ url: "/", description: "this gateway" }])
  .annotate(OpenApi.Transform, completeDocument)
{}
