import { Context, Effect, Layer } from "effect"
import type { EngineCallError, EngineTimeout, PayloadTooLarge, StoreUnavailable, ValidationFailed } from "../domain/Errors.js"
import type { MediaSource } from "../domain/Message.js"
import type { Profile } from "../domain/Profile.js"
import { engineCall } from "../runtime/EngineCall.js"
import { SessionRepo } from "../runtime/ports/store/SessionRepo.js"
import { MediaIntake } from "./MediaIntake.js"
import { takeInPicture } from "./media/pictures.js"
import { makeSessionCalls } from "./SessionCalls.js"

type Failure = EngineCallError | EngineTimeout | StoreUnavailable

export interface ProfileService {
  /** The session's own profile, as the network shows it (the session must be ready). */
  readonly get: (sessionId: string) => Effect.Effect<Profile, Failure>
  /** The push name others see; the session's `pushName` follows. */
  readonly setName: (sessionId: string, name: string) => Effect.Effect<Profile, Failure>
  readonly setAbout: (sessionId: string, about: string) => Effect.Effect<Profile, Failure>
  /** Any JPEG, PNG or WebP, made WhatsApp's 640×640 JPEG. */
  readonly setPicture: (sessionId: string, source: MediaSource) => Effect.Effect<Profile, Failure | ValidationFailed | PayloadTooLarge>
  readonly removePicture: (sessionId: string) => Effect.Effect<Profile, Failure>
}

export class ProfileOfSession extends Context.Tag("switchboard/Profile")<ProfileOfSession, ProfileService>() {
  static readonly layer = Layer.effect(ProfileOfSession, Effect.suspend(() => make))
}

const make = Effect.gen(function*() {
  const sessions = yield* SessionRepo
  const intake = yield* MediaIntake
  const { call, exists } = yield* makeSessionCalls

  const get = (sessionId: string) =>
    Effect.map(call(sessionId, engineCall("ProfileGet", {})), ({ about, name, pictureUrl }): Profile => ({ name, about, picture: pictureUrl }))

  const service: ProfileService = {
    get: Effect.fn("Profile.get")(get),
    setName: Effect.fn("Profile.setName")(function*(sessionId, name) {
      yield* call(sessionId, engineCall("ProfileSetName", { name }))
      yield* sessions.update(sessionId, { pushName: name })
      return yield* get(sessionId)
    }),
    setAbout: Effect.fn("Profile.setAbout")((sessionId, about) =>
      Effect.zipRight(call(sessionId, engineCall("ProfileSetAbout", { about })), get(sessionId))),
    setPicture: Effect.fn("Profile.setPicture")(function*(sessionId, source) {
      yield* exists(sessionId)
      const jpeg = yield* takeInPicture(intake, source)
      yield* call(sessionId, engineCall("ProfileSetPicture", { jpeg }))
      return yield* get(sessionId)
    }),
    removePicture: Effect.fn("Profile.removePicture")((sessionId) =>
      Effect.zipRight(call(sessionId, engineCall("ProfileSetPicture", { jpeg: null })), get(sessionId)))
  }
  return service
})
