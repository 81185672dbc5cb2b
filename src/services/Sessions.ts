import { existingSession } from "./sessionLookup.js"
import { AppSettings } from "../domain/Settings.js"
import { defaultSessionSettings } from "../domain/SessionSettings.js"
import type { StoreUnavailable } from "../domain/Errors.js"
import { Clock, Context, type Duration, Effect, Layer, Option, Stream } from "effect"
import { loadQrCode } from "../runtime/lazyLibraries.js"
import { type SessionFilter, SessionRepo, type SessionRow } from "../runtime/ports/store/SessionRepo.js"
import { Engine } from "../runtime/Engine.js"
import { engineCall } from "../runtime/EngineCall.js"
import { SessionSupervisor } from "../runtime/SessionSupervisor.js"
import { Conflict, type EngineCallError, type EngineTimeout, type NotFound } from "../domain/Errors.js"
import { uuidv7 } from "../domain/uuidv7.js"
import type { Page, PageRequest } from "../domain/Pagination.js"
import {
  type CreateSessionRequest,
  type Me,
  type QrCode,
  redactProxyUrl,
  runningStatuses,
  Session,
  type SessionStatus
} from "../domain/Session.js"

export interface SessionsService {
  readonly create: (request: CreateSessionRequest) => Effect.Effect<Session, Conflict | StoreUnavailable>
  readonly list: (filter: SessionFilter, page: Option.Option<PageRequest>) => Effect.Effect<Page<Session>, StoreUnavailable>
  readonly get: (sessionId: string) => Effect.Effect<Session, NotFound | StoreUnavailable>
  readonly remove: (sessionId: string) => Effect.Effect<void, NotFound | StoreUnavailable>
  readonly start: (sessionId: string) => Effect.Effect<Session, NotFound | StoreUnavailable>
  readonly stop: (sessionId: string) => Effect.Effect<Session, NotFound | StoreUnavailable>
  readonly restart: (sessionId: string) => Effect.Effect<Session, NotFound | StoreUnavailable>
  readonly logout: (sessionId: string) => Effect.Effect<Session, NotFound | StoreUnavailable>
  readonly qr: (sessionId: string) => Effect.Effect<QrCode, NotFound | Conflict | StoreUnavailable>
  readonly qrPng: (sessionId: string) => Effect.Effect<Uint8Array, NotFound | Conflict | StoreUnavailable>
  readonly pairingCode: (
    sessionId: string,
    phoneNumber: string
  ) => Effect.Effect<{ readonly code: string }, EngineCallError | EngineTimeout | StoreUnavailable>
  readonly me: (sessionId: string) => Effect.Effect<Me, NotFound | Conflict | StoreUnavailable>
  /** The proxy as shown to callers (password redacted), or null for a direct connection. */
  readonly getProxy: (sessionId: string) => Effect.Effect<Session["proxy"], NotFound | StoreUnavailable>
  /** Stores a new proxy (or none); a running session uses it from its next connect on. */
  readonly setProxy: (sessionId: string, url: string | null) => Effect.Effect<Session["proxy"], NotFound | StoreUnavailable>
  /** Waits until the session's status satisfies `predicate` (or the timeout passes) and returns it. */
  readonly awaitStatus: (
    sessionId: string,
    predicate: (status: SessionStatus) => boolean,
    timeout: Duration.DurationInput
  ) => Effect.Effect<Session, NotFound | StoreUnavailable>
}

/** The session lifecycle, as the HTTP API, the dashboard and library users see it. */
export class Sessions extends Context.Tag("switchboard/Sessions")<Sessions, SessionsService>() {
  static readonly layer = Layer.effect(Sessions, Effect.suspend(() => make))
}

export const toSession = (row: SessionRow): Session =>
  new Session({
    id: row.id as Session["id"],
    name: row.name,
    status: row.status,
    engine: row.engine,
    phone: row.phone,
    pushName: row.pushName,
    proxy: row.proxyUrl === null ? null : { url: redactProxyUrl(row.proxyUrl) },
    lastError: row.lastError,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt
  })

const notShowingQr = (status: SessionStatus) =>
  new Conflict({ code: "SESSION_NOT_READY", message: `no QR to show: the session is ${status}, not qr_ready` })

const make = Effect.gen(function*() {
  const repo = yield* SessionRepo
  const supervisor = yield* SessionSupervisor
  const engine = yield* Engine
  const { historySync } = yield* AppSettings

  const find = (sessionId: string) => existingSession(repo, sessionId)
  const get = Effect.fn("Sessions.get")((sessionId: string) => Effect.map(find(sessionId), toSession))

  const awaitStatus: SessionsService["awaitStatus"] = Effect.fn("Sessions.awaitStatus")((sessionId, predicate, timeout) =>
    Effect.zipRight(
      supervisor.watch(sessionId).pipe(
        Stream.filter((state) => predicate(state.status)),
        Stream.take(1),
        Stream.runDrain,
        Effect.timeoutOption(timeout)
      ),
      get(sessionId)
    ))

  /** Lifecycle calls answer once the actor has taken the command, not before. */
  const lifecycle = (
    name: string,
    action: (sessionId: string) => Effect.Effect<void, StoreUnavailable>,
    settled: (status: SessionStatus) => boolean
  ) =>
    Effect.fn(name)((sessionId: string) =>
      Effect.zipRight(
        Effect.zipRight(find(sessionId), action(sessionId)),
        awaitStatus(sessionId, settled, "2 seconds")
      )
    )

  const liveQr = Effect.fn("Sessions.liveQr")(function*(sessionId: string) {
    const row = yield* find(sessionId)
    const state = yield* supervisor.state(sessionId)
    if (Option.isNone(state) || Option.isNone(state.value.qr)) return yield* Effect.fail(notShowingQr(row.status))
    return state.value.qr.value
  })

  const service: SessionsService = {
    create: Effect.fn("Sessions.create")(function*(request) {
      const millis = yield* Clock.currentTimeMillis
      const now = new Date(millis).toISOString()
      const row: SessionRow = {
        id: uuidv7(millis),
        name: request.name,
        engine: engine.name,
        status: "created",
        desiredRunning: false,
        phone: null,
        pushName: null,
        lid: null,
        proxyUrl: request.proxy?.url ?? null,
        lastError: null,
        settings: defaultSessionSettings(historySync),
        createdAt: now,
        updatedAt: now
      }
      yield* repo.insert(row).pipe(Effect.catchTag("SessionNameTaken", ({ name }) =>
        Effect.fail(new Conflict({ code: "SESSION_NAME_TAKEN", message: `A session named "${name}" already exists` }))))
      if (request.autoStart === true) {
        yield* supervisor.start(row.id)
        // The row was just written: it cannot be missing.
        return yield* awaitStatus(row.id, (status) => status !== "created", "2 seconds").pipe(Effect.catchTag("NotFound", Effect.die))
      }
      return toSession(row)
    }),
    list: Effect.fn("Sessions.list")((filter, page) =>
      Effect.map(repo.list(filter, page), (result) => ({ items: result.items.map(toSession), total: result.total }))),
    get,
    remove: Effect.fn("Sessions.remove")((sessionId) => Effect.zipRight(find(sessionId), supervisor.remove(sessionId))),
    start: lifecycle("Sessions.start", supervisor.start, (status) => status !== "created" && status !== "stopped"),
    stop: lifecycle("Sessions.stop", supervisor.stop, (status) => !runningStatuses.has(status)),
    restart: lifecycle("Sessions.restart", supervisor.restart, (status) => runningStatuses.has(status)),
    logout: lifecycle("Sessions.logout", supervisor.logout, (status) => status === "logged_out"),
    qr: Effect.fn("Sessions.qr")((sessionId) =>
      Effect.map(liveQr(sessionId), ({ qr, expiresAt }) => ({ qr, expiresAt: expiresAt.toISOString() })).pipe(
        Effect.flatMap(({ qr, expiresAt }) =>
          Effect.map(Effect.promise(async () => (await loadQrCode()).toDataURL(qr, { margin: 2, width: 320 })), (image) => ({ qr, image, expiresAt }))
        )
      )),
    qrPng: Effect.fn("Sessions.qrPng")((sessionId) =>
      Effect.flatMap(liveQr(sessionId), ({ qr }) =>
        Effect.map(Effect.promise(async () => (await loadQrCode()).toBuffer(qr, { type: "png", margin: 2, width: 320 })), (png) => new Uint8Array(png)))),
    pairingCode: Effect.fn("Sessions.pairingCode")((sessionId, phoneNumber) =>
      Effect.zipRight(
        find(sessionId),
        Effect.map(supervisor.useConnection(sessionId, engineCall("RequestPairingCode", { phoneNumber: phoneNumber.replace(/^\+/, "") })), (code) => ({ code }))
      )),
    me: Effect.fn("Sessions.me")((sessionId) =>
      Effect.flatMap(find(sessionId), (row) =>
        row.phone === null
          ? Effect.fail(new Conflict({ code: "SESSION_NOT_READY", message: `session is ${row.status} and not linked to an account` }))
          : Effect.succeed({ id: `${row.phone}@c.us`, phone: row.phone, lid: row.lid, pushName: row.pushName }))),
    getProxy: Effect.fn("Sessions.getProxy")((sessionId) => Effect.map(get(sessionId), (session) => session.proxy)),
    setProxy: Effect.fn("Sessions.setProxy")((sessionId, url) =>
      Effect.zipRight(
        find(sessionId),
        Effect.map(repo.update(sessionId, { proxyUrl: url }), () => url === null ? null : { url: redactProxyUrl(url) })
      )),
    awaitStatus
  }
  return service
})
