import { Context, type Effect, type Option } from "effect"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { Label } from "../../../domain/Label.js"
import type { Page, PageRequest } from "../../../domain/Pagination.js"



/** WhatsApp Business labels of each session, and which chats carry them. */
export class LabelRepo extends Context.Tag("switchboard/LabelRepo")<LabelRepo, {
  readonly upsert: (sessionId: string, label: Label) => Effect.Effect<void, StoreUnavailable>
  readonly remove: (sessionId: string, labelId: string) => Effect.Effect<void, StoreUnavailable>
  readonly find: (sessionId: string, labelId: string) => Effect.Effect<Option.Option<Label>, StoreUnavailable>
  readonly list: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Label>, StoreUnavailable>
  readonly setOnChat: (sessionId: string, chatId: string, labelId: string, on: boolean) => Effect.Effect<void, StoreUnavailable>
  readonly ofChat: (sessionId: string, chatId: string) => Effect.Effect<Label[], StoreUnavailable>
}>() {}
