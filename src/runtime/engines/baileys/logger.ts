import type { ILogger } from "@whiskeysockets/baileys/lib/Utils/logger.js"
import { Effect, Runtime } from "effect"

/**
 * Baileys' pino-style logger, bridged to Effect's logger. Baileys logs objects that can hold
 * key material, stanzas and credentials (`{ me, creds… }`), so only the message string goes
 * through, plus an error's message; trace and debug are dropped (they are per-stanza and
 * would drown everything else).
 */
export const makeBaileysLogger = (runtime: Runtime.Runtime<never>, annotations: Record<string, string>): ILogger => {
  const emit = (log: (message: string) => Effect.Effect<void>) => (obj: unknown, msg?: string) => {
    const text = msg ?? (typeof obj === "string" ? obj : undefined)
    const cause = errorMessageOf(obj)
    if (text === undefined && cause === undefined) return
    const line = cause === undefined ? `baileys: ${text}` : `baileys: ${text ?? "error"}: ${cause}`
    try {
      Runtime.runSync(runtime)(log(line).pipe(Effect.annotateLogs(annotations)))
    } catch {
      // A log line must never break the socket.
    }
  }
  const logger: ILogger = {
    // Baileys builds some expensive trace payloads only when the level says trace.
    level: "info",
    child: () => logger,
    trace: () => undefined,
    debug: () => undefined,
    info: emit(Effect.logDebug),
    warn: emit(Effect.logWarning),
    error: emit(Effect.logError)
  }
  return logger
}

const errorMessageOf = (obj: unknown): string | undefined => {
  if (obj instanceof Error) return obj.message
  if (typeof obj !== "object" || obj === null) return undefined
  for (const field of ["err", "error"] as const) {
    const value = (obj as Record<string, unknown>)[field]
    if (value instanceof Error) return value.message
  }
  return undefined
}
