import { answeringStoreOutage } from "../ErrorResponses.js"
import { HttpApiBuilder } from "@effect/platform"
import { DateTime, Effect } from "effect"
import { ApiKeys } from "../../services/ApiKeys.js"
import { Audit } from "../../services/Audit.js"
import { pageRequestOf, toListBody } from "../../domain/Pagination.js"
import { SwitchboardApi } from "../Api.js"
import { listed } from "../Pagination.js"

export const ApiKeysHandlers = HttpApiBuilder.group(SwitchboardApi, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    return handlers
      .handle("list", answeringStoreOutage(({ urlParams }) => listed(urlParams, (page) => keys.list(page))))
      .handle("create", answeringStoreOutage(({ payload }) => keys.create(payload)))
      .handle("get", answeringStoreOutage(({ path }) => keys.get(path.keyId)))
      .handle("update", answeringStoreOutage(({ path, payload }) => keys.update(path.keyId, payload)))
      .handle("revoke", answeringStoreOutage(({ path }) => keys.revoke(path.keyId)))
      .handle("remove", answeringStoreOutage(({ path }) => keys.remove(path.keyId)))
  }))

export const AuditHandlers = HttpApiBuilder.group(SwitchboardApi, "audit", (handlers) =>
  Effect.gen(function*() {
    const audit = yield* Audit
    return handlers.handle("list", answeringStoreOutage(({ urlParams }) =>
      Effect.gen(function*() {
        const page = pageRequestOf(urlParams)
        const { keyId, sessionId, action, outcome, since, until } = urlParams
        const found = yield* audit.list({
          keyId,
          sessionId,
          action,
          outcome,
          since: since === undefined ? undefined : DateTime.formatIso(since),
          until: until === undefined ? undefined : DateTime.formatIso(until)
        }, page)
        return toListBody(page, found)
      })))
  }))
