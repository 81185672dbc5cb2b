import { Layer } from "effect"
import { SqlStore } from "./SqlStore.js"
import { SqlGroupCommit } from "./SqlGroupCommit.js"
import { SqlApiKeyRepo } from "./ApiKeyRepo.js"
import { SqlAuditRepo } from "./AuditRepo.js"
import { SqlAuthRepo } from "./AuthRepo.js"
import { SqlBatchRepo } from "./BatchRepo.js"
import { SqlCallRepo } from "./CallRepo.js"
import { SqlChannelRepo } from "./ChannelRepo.js"
import { SqlChatRepo } from "./ChatRepo.js"
import { SqlContactRepo } from "./ContactRepo.js"
import { SqlDeliveryRepo } from "./DeliveryRepo.js"
import { SqlEventRepo } from "./EventRepo.js"
import { SqlGroupRepo } from "./GroupRepo.js"
import { SqlLabelRepo } from "./LabelRepo.js"
import { SqlMessageRepo } from "./MessageRepo.js"
import { SqlPresenceRepo } from "./PresenceRepo.js"
import { SqlSessionRepo } from "./SessionRepo.js"
import { SqlWebhookRepo } from "./WebhookRepo.js"

export * from "./ApiKeyRepo.js"
export * from "./AuditRepo.js"
export * from "./AuthRepo.js"
export * from "./BatchRepo.js"
export * from "./CallRepo.js"
export * from "./ChannelRepo.js"
export * from "./ChatRepo.js"
export * from "./ContactRepo.js"
export * from "./DeliveryRepo.js"
export * from "./EventRepo.js"
export * from "./GroupRepo.js"
export * from "./LabelRepo.js"
export * from "./MessageRepo.js"
export * from "./PresenceRepo.js"
export * from "./Migrations.js"
export * from "./SessionRepo.js"
export * from "./WebhookRepo.js"
export * from "./SqliteStore.js"
export * from "./SqlStore.js"
export * from "./SqlGroupCommit.js"

/** The Store's transactions and every repository; each needs only a `SqlClient` (e.g. from `storeLayerFromUrl`). */
export const RepositoriesLive = Layer.mergeAll(
  Layer.provideMerge(SqlGroupCommit, SqlStore),
  SqlSessionRepo,
  SqlAuthRepo,
  SqlMessageRepo,
  SqlPresenceRepo,
  SqlBatchRepo,
  SqlApiKeyRepo,
  SqlAuditRepo,
  SqlGroupRepo,
  SqlChannelRepo,
  SqlLabelRepo,
  SqlContactRepo,
  SqlEventRepo,
  SqlWebhookRepo,
  SqlDeliveryRepo,
  SqlChatRepo,
  SqlCallRepo
)
export * from "./SqlSandboxLedger.js"
