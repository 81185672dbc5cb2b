import { type QrCode, Session } from "../../domain/Session.js"
import { answeringStoreOutage } from "../ErrorResponses.js"
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { pageRequestOf, toListBody } from "../../domain/Pagination.js"
import { CurrentPrincipal } from "../../domain/Principal.js"
import { OutboundBacklog } from "../../services/outboundBacklog.js"
import { Sessions } from "../../services/Sessions.js"
import { Engine } from "../../runtime/Engine.js"
import { forbidden } from "../AccessPolicy.js"
import { SwitchboardApi } from "../Api.js"

export const SessionsHandlers = HttpApiBuilder.group(SwitchboardApi, "sessions", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const backlog = yield* OutboundBacklog
    const { clientVersion } = yield* Engine
    return handlers
      .handle("create", answeringStoreOutage(({ payload }) =>
        Effect.gen(function*() {
          // A key limited to some sessions may create one it names (by name): it can use it after.
          const { allowedSessions } = yield* CurrentPrincipal
          if (allowedSessions !== null && !allowedSessions.includes(payload.name)) {
            return yield* forbidden(`this key may only create the sessions it names (allowedSessions)`)
          }
          return yield* sessions.create(payload)
        })))
      .handle("list", answeringStoreOutage(({ urlParams }) =>
        Effect.gen(function*() {
          const page = pageRequestOf(urlParams)
          const { allowedSessions } = yield* CurrentPrincipal
          const only = allowedSessions === null ? {} : { only: allowedSessions }
          return toListBody(page, yield* sessions.list({ status: urlParams.status, ...only }, page))
        })))
      .handle("get", answeringStoreOutage(({ path }) =>
        Effect.flatMap(sessions.get(path.sessionId), (session) =>
          Effect.map(backlog.view(path.sessionId), (outbound) => new Session({ ...session, outbound, waVersion: clientVersion })))))
      .handle("remove", answeringStoreOutage(({ path }) => sessions.remove(path.sessionId)))
      .handle("start", answeringStoreOutage(({ path }) => sessions.start(path.sessionId)))
      .handle("stop", answeringStoreOutage(({ path }) => sessions.stop(path.sessionId)))
      .handle("restart", answeringStoreOutage(({ path }) => sessions.restart(path.sessionId)))
      .handle("logout", answeringStoreOutage(({ path }) => sessions.logout(path.sessionId)))
      .handle("qr", answeringStoreOutage(({ path, urlParams }) =>
        urlParams.format === "png" ? sessions.qrPng(path.sessionId) : Effect.map(sessions.qr(path.sessionId), (qr): QrCode | Uint8Array => qr)))
      .handle("pairingCode", answeringStoreOutage(({ path, payload }) => sessions.pairingCode(path.sessionId, payload.phoneNumber)))
      .handle("me", answeringStoreOutage(({ path }) => sessions.me(path.sessionId)))
      .handle("getProxy", answeringStoreOutage(({ path }) => sessions.getProxy(path.sessionId)))
      .handle("setProxy", answeringStoreOutage(({ path, payload }) => sessions.setProxy(path.sessionId, payload.url)))
  }))
