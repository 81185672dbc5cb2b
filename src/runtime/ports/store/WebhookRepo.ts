import { Context, type Effect, type Option } from "effect"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { DomainEvent } from "../../../domain/Events.js"
import type { Page, PageRequest } from "../../../domain/Pagination.js"

/** A webhook as stored: with its signing secret, which only the dispatcher reads. */
export interface WebhookRow {
  readonly id: string
  readonly sessionId: string | null
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly enabled: boolean
  readonly headers: Readonly<Record<string, string>>
  readonly maxAttempts: number
  readonly secret: string
  readonly disabledReason: string | null
  readonly createdAt: string
  readonly updatedAt: string
}

/** Whether this webhook gets this event: enabled, global or of its session, for its kind or "*". */
export const webhookWants = (webhook: WebhookRow, event: DomainEvent): boolean =>
  webhook.enabled && (webhook.sessionId === null || webhook.sessionId === event.sessionId) &&
  (webhook.events.includes("*") || webhook.events.includes(event.event))

/** Which webhooks a list shows: the global ones, or one session's. */
export type WebhookScope = { readonly global: true } | { readonly sessionId: string }


export class WebhookRepo extends Context.Tag("switchboard/WebhookRepo")<WebhookRepo, {
  readonly insert: (row: WebhookRow) => Effect.Effect<void, StoreUnavailable>
  readonly find: (id: string) => Effect.Effect<Option.Option<WebhookRow>, StoreUnavailable>
  readonly list: (scope: WebhookScope, page: Option.Option<PageRequest>) => Effect.Effect<Page<WebhookRow>, StoreUnavailable>
  readonly update: (id: string, fields: { readonly url?: string | undefined; readonly events?: readonly string[] | undefined; readonly enabled?: boolean | undefined; readonly headers?: Readonly<Record<string, string>> | undefined; readonly maxAttempts?: number | undefined; readonly disabledReason?: string | null | undefined; }) => Effect.Effect<void, StoreUnavailable>
  readonly remove: (id: string) => Effect.Effect<boolean, StoreUnavailable>
  /**
   * Every webhook from a copy kept in memory: dropped by every change made through this
   * repository, and read again after at most a second (another runner's changes).
   */
  readonly cached: () => Effect.Effect<ReadonlyArray<WebhookRow>, StoreUnavailable>
  /** The kept copy while it is trusted, without going to the Store; `undefined` when `cached` would read it afresh. */
  readonly kept: () => ReadonlyArray<WebhookRow> | undefined
  /** Drops the kept copy: another runner announced a change. */
  readonly forget: Effect.Effect<void>
}>() {}
