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
import { SendMediaPayload } from "./mediaRequest.js"
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
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(HealthReport).annotate(OpenApi.Identifier, "health.get"))
  .add(HttpApiEndpoint.get("live", "/health/live").addSuccess(Schema.Struct({ status: Schema.Literal("ok") })))
  .add(
    HttpApiEndpoint.get("ready", "/health/ready")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ready") }))
  )
  .annotate(OpenApi.Description, "Liveness and readiness; no key needed.")
{}

const PngImage = Schema.Uint8ArrayFromSelf.pipe(HttpApiSchema.withEncoding({ kind: "Uint8Array", contentType: "image/png" }))

export class SessionsGroup extends HttpApiGroup.make("sessions")
  .add(HttpApiEndpoint.post("create", "/sessions").annotate(RequiredRole, "operator").setPayload(CreateSessionRequest).addSuccess(Session, { status: 201 }))
  .add(
    HttpApiEndpoint.get("list", "/sessions").annotate(RequiredRole, "viewer")
      .setUrlParams(Schema.Struct({ ...PageParams, status: Schema.optional(SessionStatus) }))
      .addSuccess(ListBody(Session))
  )
  .add(HttpApiEndpoint.get("get", "/sessions/:sessionId").annotate(RequiredRole, "viewer").setPath(sessionPath).addSuccess(Session))
  .add(HttpApiEndpoint.del("remove", "/sessions/:sessionId").annotate(RequiredRole, "operator").setPath(sessionPath).addSuccess(HttpApiSchema.NoContent))
  .add(HttpApiEndpoint.post("start", "/sessions/:sessionId/start").annotate(RequiredRole, "operator").setPath(sessionPath).addSuccess(Session))
  .add(HttpApiEndpoint.post("stop", "/sessions/:sessionId/stop").annotate(RequiredRole, "operator").setPath(sessionPath).addSuccess(Session))
  .add(HttpApiEndpoint.post("restart", "/sessions/:sessionId/restart").annotate(RequiredRole, "operator").setPath(sessionPath).addSuccess(Session))
  .add(HttpApiEndpoint.post("logout", "/sessions/:sessionId/logout").annotate(RequiredRole, "operator").setPath(sessionPath).addSuccess(Session))
  .add(
    HttpApiEndpoint.get("qr", "/sessions/:sessionId/qr").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setUrlParams(Schema.Struct({ format: Schema.optional(Schema.Literal("json", "png")) }))
      .addSuccess(QrCode)
      .addSuccess(PngImage)
      .annotate(OpenApi.Transform, answersAlso(200, "image/png"))
  )
  .add(
    HttpApiEndpoint.post("pairingCode", "/sessions/:sessionId/pairing-code").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(PairingCodeRequest)
      .addSuccess(PairingCode)
  )
  .add(HttpApiEndpoint.get("me", "/sessions/:sessionId/me").annotate(RequiredRole, "viewer").setPath(sessionPath).addSuccess(Me))
  .add(HttpApiEndpoint.get("getProxy", "/sessions/:sessionId/proxy").annotate(RequiredRole, "viewer").setPath(sessionPath).addSuccess(Schema.NullOr(ProxyView)))
  .add(
    HttpApiEndpoint.put("setProxy", "/sessions/:sessionId/proxy").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(SetProxyRequest)
      .addSuccess(Schema.NullOr(ProxyView))
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
  )
  .add(mediaSend("sendImage", "/sessions/:sessionId/messages/send-image", "an image (JPEG, PNG or WebP)"))
  .add(mediaSend("sendVideo", "/sessions/:sessionId/messages/send-video", "a video (MP4 or 3GP)"))
  .add(mediaSend("sendAudio", "/sessions/:sessionId/messages/send-audio", "an audio, or a voice note with ptt"))
  .add(mediaSend("sendDocument", "/sessions/:sessionId/messages/send-document", "a document of any type"))
  .add(mediaSend(
    "sendSticker",
    "/sessions/:sessionId/messages/send-sticker",
    "a sticker: a WebP as it is, or a PNG, JPEG or GIF converted to a 512×512 WebP"
  ))
  .add(contentSend("sendLocation", "/sessions/:sessionId/messages/send-location", SendLocationRequest, "a location pin"))
  .add(contentSend(
    "sendContact",
    "/sessions/:sessionId/messages/send-contact",
    SendContactRequest,
    "1 to 20 contact cards; the vCards are built from the fields"
  ))
  .add(contentSend(
    "sendPoll",
    "/sessions/:sessionId/messages/send-poll",
    SendPollRequest,
    "a poll of 2 to 12 unique options (selectableCount: how many a voter may pick, default 1); votes come as poll.vote events"
  ))
  .add(
    HttpApiEndpoint.post("react", "/sessions/:sessionId/messages/react").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(ReactRequest)
      .addSuccess(ReactResult)
  )
  .add(
    HttpApiEndpoint.post("sendBulk", "/sessions/:sessionId/messages/send-bulk").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(SendBulkRequest)
      .addSuccess(BatchAccepted, { status: 202 })
      .addError(wireError(UnsupportedMediaType))
      .annotate(OpenApi.Transform, declaresBacklogRefusal)
  )
  .add(HttpApiEndpoint.get("getBatch", "/sessions/:sessionId/messages/batch/:batchId").annotate(RequiredRole, "viewer").setPath(batchPath).addSuccess(Batch))
  .add(
    HttpApiEndpoint.post("cancelBatch", "/sessions/:sessionId/messages/batch/:batchId/cancel").annotate(RequiredRole, "operator").setPath(batchPath).addSuccess(Batch)
  )
  .add(
    HttpApiEndpoint.post("markRead", "/sessions/:sessionId/messages/read").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(MarkReadRequest)
      .addSuccess(MarkReadResult)
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
  )
  .add(HttpApiEndpoint.get("get", "/sessions/:sessionId/messages/:messageId").annotate(RequiredRole, "viewer").setPath(messagePath).addSuccess(Message))
  .add(
    HttpApiEndpoint.get("getMedia", "/sessions/:sessionId/messages/:messageId/media").annotate(RequiredRole, "viewer")
      .setPath(messagePath)
      .addSuccess(AnyBytes)
      .annotate(OpenApi.Description, "The media's bytes, with its own content type.")
      .annotate(OpenApi.Transform, answersBytes(200))
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
