import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { onTestFailed } from "vitest"
import { sleep } from "./concurrency.js"
import { eventually, tempDir, TEST_KEY } from "./gateway.js"
import { type GatewayProcess, spawnGateway } from "./process.js"
import { serverUrl } from "./servers/availability.js"
import { freePort } from "./servers/common.js"
import { freshPostgresUrlPromise } from "./servers/postgresDatabase.js"

/**
 * Switchboard as a cluster of real processes (`CLUSTER=on`): runners on loopback over one
 * fresh Postgres database and the test Redis, each with its own API port and runner port.
 */

/** A port free on loopback right now (the runner binds it a moment later); kept here for the cluster tests. */
export { freePort }

export interface Runner extends GatewayProcess {
  readonly runnerPort: number
}

export interface TestCluster {
  readonly databaseUrl: string
  readonly runners: ReadonlyArray<Runner>
  /** Starts one more runner of this cluster. */
  readonly addRunner: (env?: Record<string, string | undefined>) => Promise<Runner>
}

/**
 * Starts `size` runners one after the other (each is listening before the next starts). `env`
 * applies to every runner; the processes are killed by `useGatewayProcesses`' cleanup.
 */
export const startCluster = async (
  size: number,
  env: Record<string, string | undefined> = {},
  label = "cluster"
): Promise<TestCluster> => {
  const databaseUrl = await freshPostgresUrlPromise(label)
  const runners: Array<Runner> = []
  const addRunner = async (extra: Record<string, string | undefined> = {}) => {
    const runnerPort = await freePort()
    const process = await spawnGateway({
      dataDir: tempDir(),
      startTimeoutMs: 30_000,
      env: {
        CLUSTER: "on",
        CLUSTER_HOST: "127.0.0.1",
        CLUSTER_PORT: String(runnerPort),
        DATABASE_URL: databaseUrl,
        CACHE_URL: serverUrl("redis"),
        API_KEY: TEST_KEY,
        ...env,
        ...extra
      }
    })
    const runner = Object.assign(process, { runnerPort })
    runners.push(runner)
    return runner
  }
  for (let i = 0; i < size; i++) await addRunner()
  return { databaseUrl, runners, addRunner }
}

// ---------------------------------------------------------------------------------------------
// Where the sessions run

/** The sessions whose actor runs in this runner: its per-session mailbox gauge lists exactly those. */
export const hostedBy = async (runner: Runner): Promise<Set<string>> => {
  const scraped = await runner.call("GET", "/api/metrics")
  if (scraped.status !== 200) throw new Error(`metrics of runner pid ${runner.pid}: ${scraped.status} ${JSON.stringify(scraped.body)}`)
  const ids = new Set<string>()
  for (const match of String(scraped.body).matchAll(/^switchboard_session_mailbox_depth\{session_id="([^"]+)"\} /gm)) ids.add(match[1]!)
  return ids
}

export interface Placement {
  /** session id → index of the runner hosting it */
  readonly host: Map<string, number>
  /** sessions listed by more than one runner, or by none, each as `<id> on [<runner indexes>]` */
  readonly misplaced: Array<string>
}

/** Where each of `sessionIds` runs, by the runners' own metrics; an undefined runner (a killed one) hosts nothing. */
export const placement = async (runners: ReadonlyArray<Runner | undefined>, sessionIds: ReadonlyArray<string>): Promise<Placement> => {
  const hosted = await Promise.all(runners.map((runner) => runner === undefined ? Promise.resolve(new Set<string>()) : hostedBy(runner)))
  const host = new Map<string, number>()
  const misplaced: Array<string> = []
  for (const id of sessionIds) {
    const where = hosted.flatMap((set, index) => set.has(id) ? [index] : [])
    if (where.length === 1) host.set(id, where[0]!)
    else misplaced.push(`${id} on [${where.join(", ")}]`)
  }
  return { host, misplaced }
}

/**
 * The placement once every session runs in exactly one runner and two reads a moment apart
 * agree (shards may still move after the cluster started).
 */
export const settledPlacement = (runners: ReadonlyArray<Runner | undefined>, sessionIds: ReadonlyArray<string>, timeoutMs: number) => {
  let previous = ""
  return eventually(
    async () => {
      const now = await placement(runners, sessionIds)
      const key = JSON.stringify([...now.host].sort())
      const stable = key === previous
      previous = key
      return { ...now, stable }
    },
    (p) => p.misplaced.length === 0 && p.stable,
    timeoutMs
  )
}

/** Successful webhook attempts this runner made: only the runner hosting the outbox entity makes any. */
export const webhookSuccesses = async (runner: Runner): Promise<number> => {
  const scraped = await runner.call("GET", "/api/metrics")
  const match = /^switchboard_webhook_attempts_total\{outcome="success"\} (\d+)/m.exec(String(scraped.body))
  return match === null ? 0 : Number(match[1])
}

/** After a runner was killed at `killedAt`: the runners by index (the killed one undefined), the others' indexes, one to read through. */
export interface Failover {
  readonly runners: ReadonlyArray<Runner | undefined>
  readonly survivors: ReadonlyArray<number>
  readonly reader: Runner
  readonly killedAt: number
}

/**
 * Polls every 250 ms until each of `ids` runs in exactly one survivor (its mailbox gauge is
 * there) and is `ready`; resolves with the milliseconds since the kill.
 */
export const backOnSurvivors = async ({ killedAt, reader, runners, survivors }: Failover, ids: ReadonlyArray<string>, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (true) {
    const now = await placement(runners, ids)
    const statuses = await Promise.all(ids.map((id) => reader.call("GET", `/api/sessions/${id}`).then((r) => r.body.status)))
    const notBack = ids.filter((id, i) => !survivors.includes(now.host.get(id) ?? -1) || statuses[i] !== "ready")
    if (notBack.length === 0) return Date.now() - killedAt
    if (Date.now() > deadline) throw new Error(`not running on a survivor and ready ${Date.now() - killedAt} ms after the kill: ${notBack.join(", ")}`)
    await sleep(250)
  }
}

export interface SendAnswer {
  readonly sessionId: string
  readonly text: string
  /** 0 when no answer came */
  readonly status: number
  readonly body: any
  readonly ms: number
  readonly at: number
}

/**
 * Sends to each of `sessionIds` until stopped: the n-th session's texts are `${label} n.round`
 * to `chatId(n)`, through `vias` in turn, with a 250 ms pause after each answer. Every answer
 * (or the error of a call that got none) lands in `answers`; `stop` waits for the last ones.
 */
export const keepSending = (sessionIds: ReadonlyArray<string>, vias: ReadonlyArray<Runner>, chatId: (n: number) => string, label: string) => {
  const answers: Array<SendAnswer> = []
  let stopped = false
  const sender = async (sessionId: string, n: number) => {
    for (let round = 0; !stopped; round++) {
      const via = vias[(n + round) % vias.length]!
      const text = `${label} ${n}.${round}`
      const began = Date.now()
      const answer = await via.call("POST", `/api/sessions/${sessionId}/messages/send-text`, { body: { chatId: chatId(n), text } })
        .catch((error: Error) => ({ status: 0, body: String(error.cause ?? error) }))
      answers.push({ sessionId, text, status: answer.status, body: answer.body, ms: Date.now() - began, at: Date.now() })
      await sleep(250)
    }
  }
  const senders = sessionIds.map((sessionId, n) => sender(sessionId, n))
  return {
    answers,
    stop: async () => {
      stopped = true
      await Promise.all(senders)
    }
  }
}

export { HEALTH_CHECK_SINGLETON, ownerPort } from "./clusterPlacement.js"

// ---------------------------------------------------------------------------------------------
// Waiting on the cluster, and explaining a failure

/** For failure messages: maps as objects, runners by pid. */
const readable = (_key: string, value: unknown) =>
  value instanceof Map
    ? Object.fromEntries(value)
    : typeof value === "object" && value !== null && "pid" in value && "baseUrl" in value
    ? `runner pid ${value.pid}`
    : value

/**
 * `probe` until `accept` holds, every 200 ms (each probe asks every runner, on a 2-core CI);
 * `explain` says what the last probe found when it never held.
 */
export const pollRunners = async <A>(
  probe: () => Promise<A>,
  accept: (value: A) => boolean,
  timeoutMs: number,
  explain: (last: A) => string = (last) => `last value: ${JSON.stringify(last, readable)}`
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const last = await probe()
    if (accept(last)) return last
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; ${explain(last)}`)
    await sleep(200)
  }
}

/** The output of the runners at `indexes`, but the access log, for failure messages. */
export const runnerLogs = (cluster: TestCluster, indexes: ReadonlyArray<number>) =>
  indexes.map((index) => {
    const lines = cluster.runners[index]!.output().split("\n").filter((line) => !line.startsWith(`{"message":"request"`))
    return `--- runner ${index} ---\n${lines.join("\n").slice(-4_000)}`
  }).join("\n")

/** What @effect/cluster keeps in Postgres (its messages, replies, runners and shard locks), for a failure's report. */
export const clusterTables = (databaseUrl: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const query = (text: string) => sql.unsafe(text).pipe(Effect.catchAll((error) => Effect.succeed([{ error: String(error) }])))
    return {
      at: new Date().toISOString(),
      runners: yield* query("SELECT machine_id, address, healthy, last_heartbeat FROM cluster_runners ORDER BY machine_id"),
      advisoryLocks: yield* query(
        "SELECT l.classid, l.objid, l.objsubid, a.pid, a.application_name, a.client_port FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted ORDER BY l.objid"
      ),
      messages: yield* query(
        "SELECT id, shard_id, entity_type, entity_id, kind, tag, processed, request_id::text, reply_id::text, last_reply_id::text, last_read FROM cluster_messages ORDER BY id"
      ),
      replies: yield* query("SELECT id::text, kind, request_id::text, acked, sequence FROM cluster_replies ORDER BY id")
    }
  }).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), applicationName: "cluster-test-report" })),
    Effect.scoped,
    Effect.timeout("10 seconds"),
    Effect.catchAllCause((cause) => Effect.succeed({ error: String(cause) })),
    Effect.runPromise
  )

/**
 * When the current test fails, keeps what a failure needs explained in a fresh directory: every
 * runner's output, `extra()` as `{name}.json` files, and the cluster's tables.
 */
export const keepLogsOnFailure = (label: string, cluster: () => TestCluster | undefined, extra: () => Record<string, unknown>) =>
  onTestFailed(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${label}-`))
    const current = cluster()
    for (const [i, runner] of (current?.runners ?? []).entries()) {
      fs.writeFileSync(path.join(dir, `runner-${i + 1}-pid-${runner.pid}-port-${runner.runnerPort}.log`), runner.output())
    }
    const files = extra()
    for (const [name, value] of Object.entries(files)) fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify(value, null, 2))
    if (current) fs.writeFileSync(path.join(dir, "cluster-tables.json"), JSON.stringify(await clusterTables(current.databaseUrl), null, 2))
    console.error(`[${label}] runner logs, ${Object.keys(files).join(", ")} and the cluster's tables: ${dir}`)
  })
