import { Context, type Effect, type Option } from "effect"
import type { SessionNameTaken, StoreUnavailable } from "../../../domain/Errors.js"
import type { Page, PageRequest } from "../../../domain/Pagination.js"
import type { EngineName, LastError, SessionStatus } from "../../../domain/Session.js"
import type { SessionSettings } from "../../../domain/SessionSettings.js"

export interface SessionRow {
  readonly id: string
  readonly name: string
  readonly engine: EngineName
  readonly status: SessionStatus
  readonly desiredRunning: boolean
  readonly phone: string | null
  readonly pushName: string | null
  readonly lid: string | null
  readonly proxyUrl: string | null
  readonly lastError: LastError | null
  /** Null for sessions created before settings existed: `defaultSessionSettings("recent")`. */
  readonly settings: SessionSettings | null
  readonly createdAt: string
  readonly updatedAt: string
}

export type SessionPatch = Partial<
  Pick<SessionRow, "status" | "desiredRunning" | "phone" | "pushName" | "lid" | "proxyUrl" | "lastError" | "settings">
>

export interface SessionFilter {
  readonly status?: SessionStatus | undefined
  /** Only these sessions, each named by its id or its name. */
  readonly only?: ReadonlyArray<string> | undefined
}

/** Sessions, oldest first. Their engine auth and messages are owned by the other repositories. */
export class SessionRepo extends Context.Tag("switchboard/SessionRepo")<SessionRepo, {
  readonly insert: (row: SessionRow) => Effect.Effect<void, SessionNameTaken | StoreUnavailable>
  readonly findById: (id: string) => Effect.Effect<Option.Option<SessionRow>, StoreUnavailable>
  readonly findByName: (name: string) => Effect.Effect<Option.Option<SessionRow>, StoreUnavailable>
  readonly list: (filter: SessionFilter, page: Option.Option<PageRequest>) => Effect.Effect<Page<SessionRow>, StoreUnavailable>
  readonly listDesiredRunning: () => Effect.Effect<ReadonlyArray<SessionRow>, StoreUnavailable>
  readonly countByStatus: () => Effect.Effect<ReadonlyMap<SessionStatus, number>, StoreUnavailable>
  readonly update: (id: string, patch: SessionPatch) => Effect.Effect<Option.Option<SessionRow>, StoreUnavailable>
  /**
   * `update` without reading the row back: one statement, in the caller's transaction if there
   * is one (a status change and its event; thousands of them when a restart brings sessions back).
   */
  readonly patch: (id: string, patch: SessionPatch) => Effect.Effect<void, StoreUnavailable>
  /** Sets the status of those of these sessions that still want to run, in one statement (a restore marks thousands at once). */
  readonly setStatusOfMany: (ids: ReadonlyArray<string>, status: SessionStatus) => Effect.Effect<void, StoreUnavailable>
  readonly remove: (id: string) => Effect.Effect<boolean, StoreUnavailable>
}>() {}
