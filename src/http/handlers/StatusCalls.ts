import { answeringStoreOutage } from "../ErrorResponses.js"
import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { AppSettings } from "../../domain/Settings.js"
import { Calls } from "../../services/Calls.js"
import { SessionSettingsStore } from "../../services/SessionSettings.js"
import { StatusUpdates } from "../../services/StatusUpdates.js"
import { SandboxCalls } from "../../services/SandboxCalls.js"
import { SwitchboardApi } from "../Api.js"
import { readMediaStatusRequest } from "../mediaRequest.js"
import { listed } from "../Pagination.js"

export const SettingsHandlers = HttpApiBuilder.group(SwitchboardApi, "settings", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* SessionSettingsStore
    return handlers
      .handle("get", answeringStoreOutage(({ path }) => settings.get(path.sessionId)))
      .handle("update", answeringStoreOutage(({ path, payload }) => settings.update(path.sessionId, payload)))
  }))

export const StatusHandlers = HttpApiBuilder.group(SwitchboardApi, "status", (handlers) =>
  Effect.gen(function*() {
    const status = yield* StatusUpdates
    const { media } = yield* AppSettings
    const postMedia = (kind: "image" | "video") => ({ path, request }: { path: { sessionId: string }; request: HttpServerRequest.HttpServerRequest }) =>
      readMediaStatusRequest(request, kind, media.maxBytes).pipe(
        Effect.flatMap((input) => status.postMedia(path.sessionId, input)),
        Effect.map((sent) => HttpServerResponse.unsafeJson(sent, { status: 201 })),
        Effect.scoped
      )
    return handlers
      .handle("postText", answeringStoreOutage(({ path, payload }) => status.postText(path.sessionId, payload)))
      .handleRaw("postImage", answeringStoreOutage(postMedia("image")))
      .handleRaw("postVideo", answeringStoreOutage(postMedia("video")))
      .handle("list", answeringStoreOutage(({ path, urlParams }) =>
        listed(urlParams, (page) => status.list(path.sessionId, page))))
      .handle("remove", answeringStoreOutage(({ path }) => status.remove(path.sessionId, path.messageId)))
  }))

export const CallsHandlers = HttpApiBuilder.group(SwitchboardApi, "calls", (handlers) =>
  Effect.gen(function*() {
    const calls = yield* Calls
    return handlers
      .handle("list", answeringStoreOutage(({ path, urlParams }) =>
        listed(urlParams, (page) => calls.list(path.sessionId, page))))
      .handle("reject", answeringStoreOutage(({ path }) => calls.reject(path.sessionId, path.callId)))
  }))

export const SandboxHandlers = HttpApiBuilder.group(SwitchboardApi, "sandbox", (handlers) =>
  Effect.gen(function*() {
    const sandbox = yield* SandboxCalls
    return handlers.handle("incomingCall", answeringStoreOutage(({ path, payload }) => sandbox.ring(path.sessionId, payload)))
  }))
