import type { StoreUnavailable } from "../domain/Errors.js"
import { Context, Effect, Layer, type Option } from "effect"
import { LabelRepo } from "../runtime/ports/store/LabelRepo.js"
import { engineCall } from "../runtime/EngineCall.js"
import type { EngineCallError, EngineTimeout, NotFound } from "../domain/Errors.js"
import type { Label } from "../domain/Label.js"
import type { Page, PageRequest } from "../domain/Pagination.js"
import { makeSessionCalls } from "./SessionCalls.js"

type Failure = EngineCallError | EngineTimeout

/**
 * WhatsApp Business labels. The network tells the gateway about labels (the phone syncs them),
 * so lists come from the Store, kept current by `LabelChanged` events and by what this API does.
 */
export interface LabelsService {
  readonly list: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Label>, NotFound | StoreUnavailable>
  readonly create: (sessionId: string, name: string, color: number | null) => Effect.Effect<Label, Failure | StoreUnavailable>
  readonly ofChat: (sessionId: string, chatId: string) => Effect.Effect<ReadonlyArray<Label>, NotFound | StoreUnavailable>
  readonly addToChat: (sessionId: string, chatId: string, labelId: string) => Effect.Effect<ReadonlyArray<Label>, Failure | StoreUnavailable>
  readonly removeFromChat: (sessionId: string, chatId: string, labelId: string) => Effect.Effect<ReadonlyArray<Label>, Failure | StoreUnavailable>
}

export class Labels extends Context.Tag("switchboard/Labels")<Labels, LabelsService>() {
  static readonly layer = Layer.effect(Labels, Effect.suspend(() => make))
}

const make = Effect.gen(function*() {
  const repo = yield* LabelRepo
  const { call, exists } = yield* makeSessionCalls

  const service: LabelsService = {
    list: Effect.fn("Labels.list")((sessionId, page) => Effect.zipRight(exists(sessionId), repo.list(sessionId, page))),
    create: Effect.fn("Labels.create")((sessionId, name, color) =>
      call(sessionId, engineCall("LabelsCreate", { name, color })).pipe(Effect.tap((label) => repo.upsert(sessionId, label)))),
    ofChat: Effect.fn("Labels.ofChat")((sessionId, chatId) => Effect.zipRight(exists(sessionId), repo.ofChat(sessionId, chatId))),
    addToChat: Effect.fn("Labels.addToChat")((sessionId, chatId, labelId) =>
      call(sessionId, engineCall("LabelsAddToChat", { chatId, labelId })).pipe(
        Effect.zipRight(repo.setOnChat(sessionId, chatId, labelId, true)),
        Effect.zipRight(repo.ofChat(sessionId, chatId))
      )),
    removeFromChat: Effect.fn("Labels.removeFromChat")((sessionId, chatId, labelId) =>
      call(sessionId, engineCall("LabelsRemoveFromChat", { chatId, labelId })).pipe(
        Effect.zipRight(repo.setOnChat(sessionId, chatId, labelId, false)),
        Effect.zipRight(repo.ofChat(sessionId, chatId))
      ))
  }
  return service
})
