import type { HistorySync } from "./SessionSettings.js"
import { Context, type Duration, Layer, type LogLevel, type Option, type Redacted } from "effect"

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
  /** `WA_VERSION`: the WhatsApp Web version the Baileys engine presents (`2.3000.1029000000`); none: the one built into Baileys. */
  readonly waVersion: Option.Option<`${number}.${number}.${number}`>
  /** `WA_VERSION_URL`: a page naming the current WhatsApp Web version, read at start when `WA_VERSION` is not set. */
  readonly waVersionUrl: Option.Option<string>
  /**
   * `WA_KEEPALIVE_INTERVAL_MS`: how often a Baileys socket pings WhatsApp (default 20 s); one
   * that hears nothing for two intervals is cut and its session reconnects.
   */
  readonly waKeepAliveInterval: Duration.Duration
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly sandboxPairDelay: Duration.Duration
  /** Sandbox sessions are WhatsApp Business accounts (labels work); tests mark single ones instead. */
  readonly sandboxBusiness: boolean
  /** What a new session imports from the phone on linking (`HISTORY_SYNC`, default `recent`). */
  readonly historySync: HistorySync
  readonly reconnect: ReconnectSettings
  readonly pacing: PacingSettings
  /**
   * Accepted sends a session may have waiting to go out (`OUTBOUND_BACKLOG_MAX`, default 10,000);
   * past it a send is refused with 429 SESSION_BACKLOG_FULL and a Retry-After. 0 = no bound.
   */
  readonly outboundBacklogMax: number
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
  /** Keep the bytes of a message's media when the message is deleted for everyone (`KEEP_REVOKED_MEDIA`). */
  readonly keepRevoked: boolean
}

export interface WebhookSettings {
  /** How long one delivery attempt may take (`WEBHOOK_TIMEOUT_MS`, default 10 s). */
  readonly timeout: Duration.Duration
  /** Let webhook URLs resolve to loopback, private and link-local addresses (off: SSRF guard). */
  readonly allowPrivate: boolean
  /** Deliveries in flight at once, over all webhooks. */
  readonly concurrency: number
  /** Deliveries in flight at once to one webhook at first, and whenever its receiver is slow or failing: a slow receiver holds only these. */
  readonly perWebhookConcurrency: number
  /** The most in flight to one webhook whose receiver answers fast and well while deliveries wait for it (≥ `perWebhookConcurrency`). */
  readonly perWebhookConcurrencyMax: number
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

/** How fast a session sends. */
export interface PacingSettings {
  /** Sends per minute and session; 0 switches pacing off. */
  readonly sendsPerMinute: number
}

export interface ReconnectSettings {
  /** Delay before the first reconnect attempt. */
  readonly initialDelay: Duration.Duration
  /** No delay grows beyond this. */
  readonly maxDelay: Duration.Duration
  /** Attempts in a row before the session gives up (`failed`, `RECONNECT_EXHAUSTED`). */
  readonly maxAttempts: number
  /** A connection that stayed ready this long resets the attempt budget. */
  readonly healthyAfter: Duration.Duration
}

/** The settings made of several fields (`media`, `security`…). */
export const settingGroups = ["reconnect", "pacing", "media", "webhooks", "security", "cluster"] as const
export type SettingGroup = typeof settingGroups[number]

/**
 * Settings to put over the defaults, as an embedder writes them: a group names only the fields
 * it changes (`{ media: { maxBytes: 1_000_000 } }`), the rest of the group keeps its defaults.
 */
export type SettingsOverrides = {
  readonly [K in keyof Settings]?: K extends SettingGroup ? Partial<Settings[K]> : Settings[K]
}

/** The settings the gateway runs with, read once at start (see the composition root's `Config`). */
export class AppSettings extends Context.Tag("switchboard/Settings")<AppSettings, Settings>() {
  static readonly layer = (settings: Settings) => Layer.succeed(AppSettings, settings)
}

/**
 * How often a Baileys socket pings WhatsApp (`WA_KEEPALIVE_INTERVAL_MS`). Two of them without a
 * word from the server make a dead socket: 40 s, which leaves room for the reconnect within 60 s.
 * Here rather than beside the engine, so reading the settings loads no engine code.
 */
export const DEFAULT_KEEP_ALIVE_INTERVAL_MS = 20_000
