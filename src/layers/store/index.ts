import { Layer } from "effect"
import { ApiKeyRepo } from "./ApiKeyRepo.js"
import { AuditRepo } from "./AuditRepo.js"
import { AuthRepo } from "./AuthRepo.js"
import { BatchRepo } from "./BatchRepo.js"
import { ChannelRepo } from "./ChannelRepo.js"
import { ContactRepo } from "./ContactRepo.js"
import { DeliveryRepo } from "./DeliveryRepo.js"
import { EventRepo } from "./EventRepo.js"
import { GroupRepo } from "./GroupRepo.js"
import { LabelRepo } from "./LabelRepo.js"
import { MessageRepo } from "./MessageRepo.js"
import { SessionRepo } from "./SessionRepo.js"
import { WebhookRepo } from "./WebhookRepo.js"

export * from "./ApiKeyRepo.js"
export * from "./AuditRepo.js"
export * from "./AuthRepo.js"
export * from "./BatchRepo.js"
export * from "./ChannelRepo.js"
export * from "./ContactRepo.js"
export * from "./DeliveryRepo.js"
export * from "./EventRepo.js"
export * from "./GroupRepo.js"
export * from "./LabelRepo.js"
export * from "./MessageRepo.js"
export * from "./Migrations.js"
export * from "./SessionRepo.js"
export * from "./WebhookRepo.js"
export * from "./SqliteStore.js"
export * from "./PgStore.js"

/** Every repository; each needs only a `SqlClient` (e.g. from `storeLayerFromUrl`). */
export const RepositoriesLive = Layer.mergeAll(
  SessionRepo.Default,
  AuthRepo.Default,
  MessageRepo.Default,
  BatchRepo.Default,
  ApiKeyRepo.Default,
  AuditRepo.Default,
  GroupRepo.Default,
  ChannelRepo.Default,
  LabelRepo.Default,
  ContactRepo.Default,
  EventRepo.Default,
  WebhookRepo.Default,
  DeliveryRepo.Default
)
export * from "./SqlSandboxLedger.js"
