import { Layer } from "effect"
import { ApiKeyRepo } from "./ApiKeyRepo.js"
import { AuthRepo } from "./AuthRepo.js"
import { BatchRepo } from "./BatchRepo.js"
import { MessageRepo } from "./MessageRepo.js"
import { SessionRepo } from "./SessionRepo.js"

export * from "./ApiKeyRepo.js"
export * from "./AuthRepo.js"
export * from "./BatchRepo.js"
export * from "./MessageRepo.js"
export * from "./Migrations.js"
export * from "./SessionRepo.js"
export * from "./SqliteStore.js"

/** Every repository; each needs only a `SqlClient` (e.g. from `storeLayerFromUrl`). */
export const RepositoriesLive = Layer.mergeAll(
  SessionRepo.Default,
  AuthRepo.Default,
  MessageRepo.Default,
  BatchRepo.Default,
  ApiKeyRepo.Default
)
export * from "./SqlSandboxLedger.js"
