import { Config, ConfigProvider, Duration, Effect, LogLevel, Option, Redacted } from "effect"
import * as path from "node:path"
import { cidrProblem, splitList } from "../domain/cidr.js"
import { DEFAULT_KEEP_ALIVE_INTERVAL_MS, type Settings, settingGroups, type SettingsOverrides } from "../domain/Settings.js"
// Types only from Baileys: reading the default loads no part of it.


const millis = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: `${name} must be a number of milliseconds ≥ 0`, validation: (n) => n >= 0 }),
    Config.withDefault(fallback),
    Config.map(Duration.millis)
  )

const networks = (name: string) =>
  Config.string(name).pipe(
    Config.withDefault(""),
    Config.map(splitList),
    Config.validate({
      message: `${name} must list IPv4/IPv6 addresses or CIDRs, separated by commas`,
      validation: (entries) => entries.every((entry) => cidrProblem(entry) === undefined)
    })
  )

export const settingsConfig: Config.Config<Settings> = Config.all({
  port: Config.integer("PORT").pipe(
    Config.validate({ message: "PORT must be 0 (any free port) to 65535", validation: (n) => n >= 0 && n <= 65535 }),
    Config.withDefault(2785)
  ),
  dashboardPort: Config.integer("DASHBOARD_PORT").pipe(
    Config.validate({ message: "DASHBOARD_PORT must be 0 (off) to 65535", validation: (n) => n >= 0 && n <= 65535 }),
    Config.withDefault(2886)
  ),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./data")),
  databaseUrl: Config.option(Config.string("DATABASE_URL")),
  cacheUrl: Config.string("CACHE_URL").pipe(
    Config.validate({
      message: "CACHE_URL must be memory or a redis:// (rediss://) URL",
      validation: (url) => url === "memory" || /^rediss?:\/\/./.test(url)
    }),
    Config.withDefault("memory")
  ),
  engine: Config.literal("sandbox", "baileys")("ENGINE").pipe(Config.withDefault("baileys" as const)),
  waWebSocketUrl: Config.option(Config.url("WA_WS_URL").pipe(Config.map((url) => url.toString()))),
  waVersion: Config.option(Config.string("WA_VERSION").pipe(
    Config.validate({
      message: "WA_VERSION must look like 2.3000.1029000000 (three numbers)",
      validation: (version): version is `${number}.${number}.${number}` => /^\d+\.\d+\.\d+$/.test(version)
    })
  )),
  waVersionUrl: Config.option(Config.url("WA_VERSION_URL").pipe(Config.map((url) => url.toString()))),
  waKeepAliveInterval: Config.integer("WA_KEEPALIVE_INTERVAL_MS").pipe(
    Config.validate({ message: "WA_KEEPALIVE_INTERVAL_MS must be a number of milliseconds ≥ 1000", validation: (n) => n >= 1000 }),
    Config.withDefault(DEFAULT_KEEP_ALIVE_INTERVAL_MS),
    Config.map(Duration.millis)
  ),
  apiKey: Config.option(Config.redacted("API_KEY")).pipe(
    Config.map(Option.filter((key) => Redacted.value(key).trim().length > 0))
  ),
  sandboxPairDelay: millis("SANDBOX_PAIR_DELAY_MS", 1500),
  sandboxBusiness: Config.boolean("SANDBOX_BUSINESS").pipe(Config.withDefault(false)),
  historySync: Config.literal("off", "recent", "full")("HISTORY_SYNC").pipe(Config.withDefault("recent" as const)),
  reconnect: Config.all({
    initialDelay: millis("RECONNECT_INITIAL_DELAY_MS", 1_000),
    maxDelay: millis("RECONNECT_MAX_DELAY_MS", 60_000),
    maxAttempts: Config.integer("RECONNECT_MAX_ATTEMPTS").pipe(Config.withDefault(10)),
    healthyAfter: millis("RECONNECT_HEALTHY_AFTER_MS", 30_000)
  }),
  rateLimitPerMinute: Config.integer("RATE_LIMIT_PER_MINUTE").pipe(
    Config.validate({ message: "RATE_LIMIT_PER_MINUTE must be ≥ 0 (0 switches the limit off)", validation: (n) => n >= 0 }),
    Config.withDefault(1200)
  ),
  pacing: Config.all({
    sendsPerMinute: Config.integer("SEND_RATE_PER_MINUTE").pipe(
      Config.validate({ message: "SEND_RATE_PER_MINUTE must be ≥ 0 (0 switches pacing off)", validation: (n) => n >= 0 }),
      Config.withDefault(20)
    )
  }),
  outboundBacklogMax: Config.integer("OUTBOUND_BACKLOG_MAX").pipe(
    Config.validate({ message: "OUTBOUND_BACKLOG_MAX must be ≥ 0 (0: no bound)", validation: (n) => n >= 0 }),
    Config.withDefault(10_000)
  ),
  media: Config.all({
    url: Config.option(Config.string("MEDIA_URL")),
    maxBytes: Config.integer("MEDIA_MAX_BYTES").pipe(
      Config.validate({ message: "MEDIA_MAX_BYTES must be a number of bytes ≥ 1", validation: (n) => n >= 1 }),
      Config.withDefault(64 * 1024 * 1024)
    ),
    allowPrivate: Config.boolean("MEDIA_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
    fetchTimeout: millis("MEDIA_FETCH_TIMEOUT_MS", 30_000),
    incoming: Config.literal("store", "skip")("INCOMING_MEDIA").pipe(Config.withDefault("store" as const)),
    keepRevoked: Config.boolean("KEEP_REVOKED_MEDIA").pipe(Config.withDefault(false))
  }),
  webhooks: Config.all({
    timeout: millis("WEBHOOK_TIMEOUT_MS", 10_000),
    allowPrivate: Config.boolean("WEBHOOK_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
    concurrency: Config.integer("WEBHOOK_CONCURRENCY").pipe(
      Config.validate({ message: "WEBHOOK_CONCURRENCY must be ≥ 1", validation: (n) => n >= 1 }),
      Config.withDefault(32)
    ),
    perWebhookConcurrency: Config.integer("WEBHOOK_CONCURRENCY_PER_WEBHOOK").pipe(
      Config.validate({ message: "WEBHOOK_CONCURRENCY_PER_WEBHOOK must be ≥ 1", validation: (n) => n >= 1 }),
      Config.withDefault(4)
    ),
    perWebhookConcurrencyMax: Config.integer("WEBHOOK_CONCURRENCY_PER_WEBHOOK_MAX").pipe(
      Config.validate({ message: "WEBHOOK_CONCURRENCY_PER_WEBHOOK_MAX must be ≥ 1", validation: (n) => n >= 1 }),
      Config.withDefault(16)
    ),
    eventRetention: Config.integer("EVENT_RETENTION_HOURS").pipe(
      Config.validate({ message: "EVENT_RETENTION_HOURS must be ≥ 1", validation: (n) => n >= 1 }),
      Config.withDefault(72),
      Config.map(Duration.hours)
    )
  }),
  security: Config.all({
    allowedCidrs: networks("ALLOWED_CIDRS"),
    trustedProxies: networks("TRUSTED_PROXIES"),
    metricsToken: Config.option(Config.redacted("METRICS_TOKEN")).pipe(
      Config.map(Option.filter((token) => Redacted.value(token).trim().length > 0))
    ),
    auditRetention: Config.integer("AUDIT_RETENTION_DAYS").pipe(
      Config.validate({ message: "AUDIT_RETENTION_DAYS must be ≥ 1", validation: (n) => n >= 1 }),
      Config.withDefault(90),
      Config.map(Duration.days)
    )
  }),
  shutdownTimeout: millis("SHUTDOWN_TIMEOUT_MS", 30_000),
  bodyMaxBytes: Config.integer("BODY_MAX_BYTES").pipe(
    Config.validate({ message: "BODY_MAX_BYTES must be a number of bytes ≥ 1024", validation: (n) => n >= 1024 }),
    Config.withDefault(1024 * 1024)
  ),
  logLevel: Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info)),
  logFormat: Config.literal("json", "pretty")("LOG_FORMAT").pipe(Config.withDefault("json" as const)),
  cluster: Config.all({
    enabled: Config.literal("on", "off")("CLUSTER").pipe(Config.withDefault("off" as const), Config.map((value) => value === "on")),
    host: Config.string("CLUSTER_HOST").pipe(Config.withDefault("127.0.0.1")),
    port: Config.integer("CLUSTER_PORT").pipe(
      Config.validate({ message: "CLUSTER_PORT must be 1 to 65535", validation: (n) => n >= 1 && n <= 65535 }),
      Config.withDefault(34431)
    ),
    listenHost: Config.option(Config.string("CLUSTER_LISTEN_HOST"))
  })
}).pipe(
  Config.map(({ databaseUrl, dataDir, ...rest }) => ({
    ...rest,
    dataDir,
    databaseUrl: Option.getOrElse(databaseUrl, () => `sqlite:${path.join(dataDir, "switchboard.db")}`)
  })),
  Config.validate({
    message: "CLUSTER=on needs DATABASE_URL on Postgres (postgres://…): the runners share it",
    validation: (settings) => !settings.cluster.enabled || /^postgres(ql)?:\/\//.test(settings.databaseUrl)
  })
)

/**
 * Settings for tests and embedding: the defaults, with overrides. A `dataDir` is read as
 * `DATA_DIR` would be, so what follows from it (the SQLite file, unless `databaseUrl` is given;
 * the media directory) lives there and not in `./data`.
 */
export const defaultSettings = (overrides: SettingsOverrides = {}): Effect.Effect<Settings> => {
  const given = definedOnly(overrides)
  return settingsConfig.pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(given.dataDir === undefined ? [] : [["DATA_DIR", given.dataDir]]))),
    Effect.orDie,
    Effect.map((defaults) => {
      const merged: Record<string, unknown> = { ...defaults, ...given }
      // A group's override names only the fields it changes; the others keep their defaults.
      for (const group of settingGroups) {
        const fields = given[group]
        if (fields !== undefined) merged[group] = { ...defaults[group], ...definedOnly(fields) }
      }
      return merged as unknown as Settings
    })
  )
}

/**
 * An override left undefined (`databaseUrl: process.env.DATABASE_URL`, unset, in an app without
 * exactOptionalPropertyTypes) keeps the default instead of erasing it.
 */
const definedOnly = <A extends object>(overrides: A): A =>
  Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined)) as A
