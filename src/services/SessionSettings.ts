import { Context, Effect, Layer } from "effect"
import type { NotFound, StoreUnavailable } from "../domain/Errors.js"
import { type SessionSettings, settingsOrDefault, type UpdateSessionSettingsRequest } from "../domain/SessionSettings.js"
import { SessionRepo } from "../runtime/ports/store/SessionRepo.js"
import { existingSession } from "./sessionLookup.js"

/**
 * A session's own behaviour (`…/settings`). The runtime reads them where they matter: calls
 * (`rejectCalls`, `rejectCallMessage`) as each call comes, `historySync` and
 * `markOnlineOnConnect` when the session next connects.
 */
export interface SessionSettingsService {
  readonly get: (sessionId: string) => Effect.Effect<SessionSettings, NotFound | StoreUnavailable>
  /** Changes the fields named, keeps the others; the whole settings as they now are. */
  readonly update: (sessionId: string, change: UpdateSessionSettingsRequest) => Effect.Effect<SessionSettings, NotFound | StoreUnavailable>
}

export class SessionSettingsStore extends Context.Tag("switchboard/SessionSettings")<SessionSettingsStore, SessionSettingsService>() {
  static readonly layer = Layer.effect(SessionSettingsStore, Effect.suspend(() => make))
}

const make = Effect.gen(function*() {
  const sessions = yield* SessionRepo
  const get = (sessionId: string) => Effect.map(existingSession(sessions, sessionId), (row) => settingsOrDefault(row.settings))
  const service: SessionSettingsService = {
    get: Effect.fn("SessionSettings.get")(get),
    update: Effect.fn("SessionSettings.update")(function*(sessionId, change) {
      const settings: SessionSettings = { ...(yield* get(sessionId)), ...definedFields(change) }
      yield* sessions.update(sessionId, { settings })
      return settings
    })
  }
  return service
})

/** `{rejectCalls: undefined}` names no change (a client spreading an object); only the fields given count. */
const definedFields = (change: UpdateSessionSettingsRequest): Partial<SessionSettings> =>
  Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined))
