import { Context, type Effect, type Option } from "effect"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { MessageStatus } from "../../../domain/Message.js"
import type { MessageRow } from "./MessageRepo.js"

export interface BatchItem {
  readonly messageId: string
  readonly chatId: string
  readonly status: MessageStatus
  readonly error: { readonly code: string; readonly message: string } | null
}

export interface BatchRecord {
  readonly id: string
  readonly sessionId: string
  readonly total: number
  readonly cancelledAt: string | null
  readonly createdAt: string
  readonly items: ReadonlyArray<BatchItem>
}

/** Bulk sends: a batch row, and its messages as ordinary messages carrying its id. */
export class BatchRepo extends Context.Tag("switchboard/BatchRepo")<BatchRepo, {
  readonly insert: (batch: { readonly id: string; readonly sessionId: string; readonly createdAt: string; }, rows: readonly MessageRow[]) => Effect.Effect<void, StoreUnavailable>
  readonly find: (sessionId: string, id: string) => Effect.Effect<Option.Option<BatchRecord>, StoreUnavailable>
  readonly cancel: (id: string, at: string) => Effect.Effect<{ messageId: string; chatId: string; error: { code: string; message: string; }; }[], StoreUnavailable>
}>() {}
