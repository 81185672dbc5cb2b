import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { toListBody } from "../../services/Pagination.js"
import { Sessions } from "../../services/Sessions.js"
import { SwitchboardApi } from "../Api.js"
import { pageRequest } from "../Pagination.js"

export const SessionsHandlers = HttpApiBuilder.group(SwitchboardApi, "sessions", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    return handlers
      .handle("create", ({ payload }) => sessions.create(payload))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const page = yield* pageRequest(urlParams)
          return toListBody(page, yield* sessions.list({ status: urlParams.status }, page))
        }))
      .handle("get", ({ path }) => sessions.get(path.sessionId))
      .handle("remove", ({ path }) => sessions.remove(path.sessionId))
      .handle("start", ({ path }) => sessions.start(path.sessionId))
      .handle("stop", ({ path }) => sessions.stop(path.sessionId))
      .handle("restart", ({ path }) => sessions.restart(path.sessionId))
      .handle("logout", ({ path }) => sessions.logout(path.sessionId))
      .handle("qr", ({ path, urlParams }) =>
        urlParams.format === "png" ? sessions.qrPng(path.sessionId) : sessions.qr(path.sessionId))
      .handle("pairingCode", ({ path, payload }) => sessions.pairingCode(path.sessionId, payload.phoneNumber))
      .handle("me", ({ path }) => sessions.me(path.sessionId))
      .handle("getProxy", ({ path }) => sessions.getProxy(path.sessionId))
      .handle("setProxy", ({ path, payload }) => sessions.setProxy(path.sessionId, payload.url))
  }))
