import { Schema } from "effect"
import { createRequire } from "node:module"

/** The package version, read once (src/domain and dist/domain are both two levels down). */
export const VERSION: string = (createRequire(import.meta.url)("../../package.json") as { version: string }).version

export const HealthReport = Schema.Struct({
  status: Schema.Literal("ok", "degraded"),
  version: Schema.String,
  uptime: Schema.Number.annotations({ description: "seconds since start" }),
  checks: Schema.Record({ key: Schema.String, value: Schema.String }),
  engine: Schema.Struct({
    name: Schema.Literal("sandbox", "baileys"),
    waVersion: Schema.NullOr(Schema.String).annotations({
      description: "the WhatsApp Web version presented to WhatsApp (WA_VERSION, else Baileys' built-in one); null for the sandbox"
    })
  }),
  sessions: Schema.Struct({
    restoring: Schema.Number.annotations({
      description: "sessions that were running before the start and are not back yet (restored in the background, after the API listens)"
    })
  })
})
export type HealthReport = typeof HealthReport.Type
