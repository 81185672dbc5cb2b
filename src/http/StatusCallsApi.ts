import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Call, IncomingCallRequest } from "../domain/Call.js"
import { UnsupportedMediaType } from "../domain/Errors.js"
import { Message, SendResult } from "../domain/Message.js"
import { SessionSettings, UpdateSessionSettingsRequest } from "../domain/SessionSettings.js"
import { TextStatusRequest } from "../domain/Status.js"
import { Authentication } from "./Authentication.js"
import { RequiredRole } from "./Endpoints.js"
import { MediaStatusPayload } from "./mediaForms.js"
import { ListBody, PageParams } from "./Pagination.js"
import { wireError } from "./wireError.js"
import { declaresBacklogRefusal } from "./backlogRefusal.js"

/**
 * The contract's per-session settings, status updates, the call log, and the sandbox's incoming
 * calls (their groups of SwitchboardApi in ./Api.ts). Every operation may answer 503 (the Store or
 * the media store cannot be reached) and 413 (a body over BODY_MAX_BYTES), declared on SwitchboardApi
 * with 400/404/409; 401/403/429 come with Authentication.
 */

const session = { sessionId: Schema.String }
const sessionPath = Schema.Struct(session)
const pageParams = Schema.Struct(PageParams)

export class SettingsGroup extends HttpApiGroup.make("settings")
  .add(
    HttpApiEndpoint.get("get", "/sessions/:sessionId/settings").annotate(RequiredRole, "viewer").setPath(sessionPath).addSuccess(SessionSettings)
      .annotate(OpenApi.Summary, "Get the session's settings")
      .annotate(OpenApi.Description, "How the session handles calls, read receipts, presence on connecting and history import.")
  )
  .add(
    HttpApiEndpoint.put("update", "/sessions/:sessionId/settings").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(UpdateSessionSettingsRequest)
      .addSuccess(SessionSettings)
      .annotate(
        OpenApi.Description,
        "Changes the fields given and keeps the others; answers the whole settings. rejectCalls and rejectCallMessage apply to the next call; historySync and markOnlineOnConnect when the session next connects (restart it to apply them now)."
      )
      .annotate(OpenApi.Summary, "Update the session's settings")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Per-session behaviour: calls, read receipts, presence on connecting, history import.")
{}

const statusRoute = "/sessions/:sessionId/status"

const mediaStatus = <const Name extends string>(name: Name, path: `${typeof statusRoute}/${string}`, what: string) =>
  HttpApiEndpoint.post(name, path).annotate(RequiredRole, "operator")
    .setPath(sessionPath)
    .setPayload(MediaStatusPayload)
    .addSuccess(SendResult, { status: 201 })
    .addError(wireError(UnsupportedMediaType))
    .annotate(OpenApi.Description, `Posts ${what} as a status update: JSON {media, caption?, contacts?} or multipart (a file part; contacts comma-separated).`)
    .annotate(OpenApi.Transform, declaresBacklogRefusal)

export class StatusGroup extends HttpApiGroup.make("status")
  .add(
    HttpApiEndpoint.post("postText", `${statusRoute}/text`).annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(TextStatusRequest)
      .addSuccess(SendResult, { status: 201 })
      .addError(wireError(UnsupportedMediaType))
      .annotate(OpenApi.Description, "Posts a text status update; without contacts, every contact the session knows sees it (409 NO_STATUS_AUDIENCE when it knows none).")
      .annotate(OpenApi.Transform, declaresBacklogRefusal)
      .annotate(OpenApi.Summary, "Post a text status")
  )
  .add(
    mediaStatus("postImage", `${statusRoute}/image`, "an image")
      .annotate(OpenApi.Summary, "Post an image status")
  )
  .add(
    mediaStatus("postVideo", `${statusRoute}/video`, "a video")
      .annotate(OpenApi.Summary, "Post a video status")
  )
  .add(
    HttpApiEndpoint.get("list", statusRoute).annotate(RequiredRole, "viewer")
      .setPath(sessionPath)
      .setUrlParams(pageParams)
      .addSuccess(ListBody(Message))
      .annotate(OpenApi.Description, "The status updates of the last 24 hours, newest first: the contacts' and the session's own (fromMe).")
      .annotate(OpenApi.Summary, "List status updates")
  )
  .add(
    HttpApiEndpoint.del("remove", `${statusRoute}/:messageId`).annotate(RequiredRole, "operator")
      .setPath(Schema.Struct({ ...session, messageId: Schema.String }))
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Description, "Deletes an own status update for everyone (403 NOT_OWN_STATUS for a contact's).")
      .annotate(OpenApi.Summary, "Delete a status update")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Status updates (stories) to and from the account's contacts; chatId status@broadcast.")
{}

const callsRoute = "/sessions/:sessionId/calls"

export class CallsGroup extends HttpApiGroup.make("calls")
  .add(
    HttpApiEndpoint.get("list", callsRoute).annotate(RequiredRole, "viewer").setPath(sessionPath).setUrlParams(pageParams).addSuccess(ListBody(Call))
      .annotate(OpenApi.Summary, "List calls")
      .annotate(OpenApi.Description, "The session's call log, newest first.")
  )
  .add(
    HttpApiEndpoint.post("reject", `${callsRoute}/:callId/reject`).annotate(RequiredRole, "operator")
      .setPath(Schema.Struct({ ...session, callId: Schema.String }))
      .addSuccess(Call)
      .annotate(OpenApi.Description, "Rejects a ringing call (409 CALL_NOT_RINGING once it is over).")
      .annotate(OpenApi.Summary, "Reject a call")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "The call log, newest first; calls are announced as call.received and call.update.")
{}

export class SandboxGroup extends HttpApiGroup.make("sandbox")
  .add(
    HttpApiEndpoint.post("incomingCall", "/sandbox/sessions/:sessionId/incoming-call").annotate(RequiredRole, "admin")
      .setPath(sessionPath)
      .setPayload(IncomingCallRequest)
      .addSuccess(Call, { status: 201 })
      .annotate(
        OpenApi.Description,
        "Sandbox engine only (404 NOT_SANDBOX otherwise): rings the session from a phone number, a chat id, or another sandbox session (its id or name)."
      )
      .annotate(OpenApi.Summary, "Ring a sandbox session")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Simulating the network, for testing bots without a phone.")
{}
