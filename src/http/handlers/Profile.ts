import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { AppSettings } from "../../domain/Settings.js"
import { ProfileOfSession } from "../../services/Profile.js"
import { SwitchboardApi } from "../Api.js"
import { answeringStoreOutage } from "../ErrorResponses.js"
import { readPictureRequest } from "../mediaRequest.js"

export const ProfileHandlers = HttpApiBuilder.group(SwitchboardApi, "profile", (handlers) =>
  Effect.gen(function*() {
    const profile = yield* ProfileOfSession
    const { media } = yield* AppSettings
    return handlers
      .handle("get", answeringStoreOutage(({ path }) => profile.get(path.sessionId)))
      .handle("setName", answeringStoreOutage(({ path, payload }) => profile.setName(path.sessionId, payload.name)))
      .handle("setAbout", answeringStoreOutage(({ path, payload }) => profile.setAbout(path.sessionId, payload.about)))
      .handleRaw("setPicture", answeringStoreOutage(({ path, request }: { path: { sessionId: string }; request: HttpServerRequest.HttpServerRequest }) =>
        readPictureRequest(request, media.maxBytes).pipe(
          Effect.flatMap((source) => profile.setPicture(path.sessionId, source)),
          Effect.map((updated) => HttpServerResponse.unsafeJson(updated)),
          Effect.scoped
        )))
      .handle("removePicture", answeringStoreOutage(({ path }) => profile.removePicture(path.sessionId)))
  }))
