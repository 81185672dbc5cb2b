import { Config, ConfigProvider, Context, Duration, Effect, Layer, LogLevel, Option, Redacted } from "effect"
import * as path from "node:path"
import type { PacingSettings } from "../runtime/Pacing.js"
import type { ReconnectSettings } from "../runtime/ReconnectPolicy.js"
import { cidrProblem, splitList } from "../services/network/cidr.js"

/**
 * Every setting of the gateway, read from the environment in this one place. Secrets are
 * `Redacted` so they never reach a log line by accident.
 */
export interface Settings {
  readonly port: number
  /** The web dashboard's port (`DASHBOARD_PORT`, default 2886); 0 turns the dashboard off. */
  readonly dashboardPort: number
  readonly host: string
  readonly dataDir: string
  readonly databaseUrl: string
  /** What the gateway caches and its shared limits live in: `memory` (default) or `redis://…` (`CACHE_URL`). */
  readonly cacheUrl: string
  readonly engine: "sandbox" | "baileys"
  /** The WhatsApp Web socket; only set to test against a loopback peer. */
  readonly waWebSocketUrl: Option.Option<string>
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly sandboxPairDelay: Duration.Duration
  /** Sandbox sessions are WhatsApp Business accounts (labels work); tests mark single ones instead. */
  readonly sandboxBusiness: boolean
  readonly reconnect: ReconnectSettings
  readonly pacing: PacingSettings
  /** Requests a minute per API key (per address without one); 0 = no limit. */
  readonly rateLimitPerMinute: number
  readonly media: MediaSettings
  readonly webhooks: WebhookSettings
  readonly security: SecuritySettings
  /** How long SIGTERM waits for in-flight requests and queued sends (`SHUTDOWN_TIMEOUT_MS`, default 30 s). */
  readonly shutdownTimeout: Duration.Duration
  /** The largest request body outside the media endpoints (`BODY_MAX_BYTES`, default 1 MiB) → 413. */
  readonly bodyMaxBytes: number
  readonly logLevel: LogLevel.LogLevel
  readonly logFormat: "json" | "pretty"
  /** Several processes over one Postgres as a cluster (`CLUSTER=on`), or one process (`off`, the default). */
  readonly cluster: ClusterSettings
}

export interface ClusterSettings {
  readonly enabled: boolean
  /** The address other runners reach this one at (`CLUSTER_HOST`, default 127.0.0.1). */
  readonly host: string
  /** The port runners talk to each other on (`CLUSTER_PORT`, default 34431). */
  readonly port: number
  /** The address the runner listens on, if not `host` (`CLUSTER_LISTEN_HOST`, e.g. 0.0.0.0 in a container). */
  readonly listenHost: Option.Option<string>
}

export interface MediaSettings {
  /** Where media is kept: `file:<dir>` or `s3://bucket[/prefix]?region=…`; default `file:<DATA_DIR>/media`. */
  readonly url: Option.Option<string>
  /** The largest media accepted on any path (upload, URL fetch, incoming); default 64 MiB. */
  readonly maxBytes: number
  /** Media URLs may point at loopback, private and link-local addresses (off: SSRF guard). */
  readonly allowPrivate: boolean
  /** How long fetching a media URL may take in all. */
  readonly fetchTimeout: Duration.Duration
  /** Incoming media: download and keep it (`store`), or keep only what it is (`skip`). */
  readonly incoming: "store" | "skip"
}

export interface WebhookSettings {
  /** How long one delivery attempt may take (`WEBHOOK_TIMEOUT_MS`, default 10 s). */
  readonly timeout: Duration.Duration
  /** Let webhook URLs resolve to loopback, private and link-local addresses (off: SSRF guard). */
  readonly allowPrivate: boolean
  /** Deliveries in flight at once, over all webhooks. */
  readonly concurrency: number
  /** Deliveries in flight at once to one webhook: a slow receiver holds only its own. */
  readonly perWebhookConcurrency: number
  /** How long delivered events stay in the outbox (for Last-Event-ID resumes). */
  readonly eventRetention: Duration.Duration
}

export interface SecuritySettings {
  /** Networks allowed to call at all (`ALLOWED_CIDRS`); empty = any address. */
  readonly allowedCidrs: ReadonlyArray<string>
  /** Proxies whose `X-Forwarded-For` is believed (`TRUSTED_PROXIES`); empty = none. */
  readonly trustedProxies: ReadonlyArray<string>
  /** A bearer token for `GET /api/metrics` alone, for scrapers (`METRICS_TOKEN`). */
  readonly metricsToken: Option.Option<Redacted.Redacted<string>>
  /** How long audit records are kept (`AUDIT_RETENTION_DAYS`, default 90). */
  readonly auditRetention: Duration.Duration
}

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
  apiKey: Config.option(Config.redacted("API_KEY")).pipe(
    Config.map(Option.filter((key) => Redacted.value(key).trim().length > 0))
  ),
  sandboxPairDelay: millis("SANDBOX_PAIR_DELAY_MS", 1500),
  sandboxBusiness: Config.boolean("SANDBOX_BUSINESS").pipe(Config.withDefault(false)),
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
  media: Config.all({
    url: Config.option(Config.string("MEDIA_URL")),
    maxBytes: Config.integer("MEDIA_MAX_BYTES").pipe(
      Config.validate({ message: "MEDIA_MAX_BYTES must be a number of bytes ≥ 1", validation: (n) => n >= 1 }),
      Config.withDefault(64 * 1024 * 1024)
    ),
    allowPrivate: Config.boolean("MEDIA_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
    fetchTimeout: millis("MEDIA_FETCH_TIMEOUT_MS", 30_000),
    incoming: Config.literal("store", "skip")("INCOMING_MEDIA").pipe(Config.withDefault("store" as const))
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

export class AppSettings extends Context.Tag("switchboard/Settings")<AppSettings, Settings>() {
  static readonly fromEnv = Layer.effect(AppSettings, settingsConfig)
  static readonly layer = (settings: Settings) => Layer.succeed(AppSettings, settings)
}

/** Settings for tests and embedding: the defaults, with overrides. */
export const defaultSettings = (overrides: Partial<Settings> = {}): Effect.Effect<Settings> =>
  settingsConfig.pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map())),
    Effect.orDie,
    Effect.map((defaults) => ({ ...defaults, ...overrides }))
  )
