import { fileURLToPath } from "node:url"

/**
 * How a gateway child process (`node dist/bundle/main.js`) is started in tests and benchmarks: the
 * script, and a clean environment for it. Free of vitest, so that bench/ can use it as well as
 * ./process.ts.
 */

export const mainScript = fileURLToPath(new URL("../../dist/bundle/main.js", import.meta.url))

/** Every setting the gateway reads; none is inherited from the environment of the parent. */
const gatewayVariables = /^(PORT|DASHBOARD_PORT|HOST|DATA_DIR|DATABASE_URL|ENGINE|API_KEY|SANDBOX_.*|MEDIA_.*|INCOMING_MEDIA|WEBHOOK_.*|EVENT_RETENTION_HOURS|RECONNECT_.*|SEND_RATE_PER_MINUTE|OUTBOUND_BACKLOG_MAX|RATE_LIMIT_PER_MINUTE|ALLOWED_CIDRS|TRUSTED_PROXIES|METRICS_TOKEN|AUDIT_RETENTION_DAYS|SHUTDOWN_TIMEOUT_MS|BODY_MAX_BYTES|CACHE_URL|LOG_LEVEL|LOG_FORMAT|CLUSTER|CLUSTER_.*)$/

/** Loopback, ports of the system's choosing, the sandbox engine, no pacing and no rate limits. */
const defaults: Record<string, string> = {
  HOST: "127.0.0.1",
  PORT: "0",
  DASHBOARD_PORT: "0",
  ENGINE: "sandbox",
  SANDBOX_PAIR_DELAY_MS: "50",
  SEND_RATE_PER_MINUTE: "0",
  RATE_LIMIT_PER_MINUTE: "0",
  LOG_LEVEL: "Info"
}

/**
 * The environment of a gateway child: this process's variables but the gateway's own, then the
 * defaults above, then `overrides` (where `undefined` removes a variable).
 */
export const gatewayEnv = (overrides: Record<string, string | undefined>): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !gatewayVariables.test(name)) env[name] = value
  }
  for (const [name, value] of Object.entries({ ...defaults, ...overrides })) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}
