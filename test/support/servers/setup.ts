/**
 * vitest globalSetup: the real servers the tests use, started once before any test file runs
 * and stopped after the last one.
 *
 *   PostgreSQL 15  TEST_POSTGRES_URL  postgres://postgres@127.0.0.1:<port>/postgres (superuser,
 *                                     trust auth; a test file makes its own database with
 *                                     `freshPostgresUrl` from ./postgresDatabase.ts)
 *   Redis 7        TEST_REDIS_URL     redis://127.0.0.1:<port> (empty, no persistence)
 *   Chromium       TEST_CHROMIUM      /usr/bin/chromium (Debian's package; the dashboard's browser tests)
 *   S3 (s3rver)    TEST_S3_ENDPOINT   http://127.0.0.1:<port>, path-style
 *                  TEST_S3_BUCKET     switchboard-test (created empty)
 *                  TEST_S3_REGION     us-east-1
 *                  TEST_S3_ACCESS_KEY_ID / TEST_S3_SECRET_ACCESS_KEY   S3RVER / S3RVER
 *
 * A server that cannot start leaves its variable unset and says why in
 * TEST_POSTGRES_UNAVAILABLE / TEST_REDIS_UNAVAILABLE / TEST_S3_UNAVAILABLE; the suites that need
 * it skip, loudly (see ./availability.ts). With CI=true the run fails instead: in CI no suite
 * may be skipped.
 *
 * Postgres and Redis come from Debian's packages (`postgresql`, `redis-server`): when their
 * programs are missing they are installed with apt-get (root only). s3rver is a devDependency.
 * Set TEST_POSTGRES_URL, TEST_REDIS_URL or TEST_S3_ENDPOINT beforehand to use servers of your
 * own instead (they are then neither started nor stopped here). TEST_SERVERS_SKIP=postgres,redis,s3
 * (any of them) starts none of those: a quicker local run, their suites skipped (fails with CI=true).
 *
 * Workers see these variables because they are set here, in vitest's main process, before any
 * worker is spawned.
 */
import * as fs from "node:fs"
import { log, type RunningServer, secondsSince } from "./common.js"
import { installDebianPackages } from "./packages.js"
import { findPostgresBinDir, startPostgres } from "./postgres.js"
import { findRedisServer, startRedis } from "./redis.js"
import { S3_ACCESS_KEY_ID, S3_BUCKET, S3_REGION, S3_SECRET_ACCESS_KEY, startS3 } from "./s3.js"

type ServerName = "postgres" | "redis" | "s3" | "chromium"

const unavailableVariable: Record<ServerName, string> = {
  postgres: "TEST_POSTGRES_UNAVAILABLE",
  redis: "TEST_REDIS_UNAVAILABLE",
  s3: "TEST_S3_UNAVAILABLE",
  chromium: "TEST_CHROMIUM_UNAVAILABLE"
}

/** Debian's Chromium, which the dashboard's browser tests drive through playwright-core. */
const CHROMIUM = "/usr/bin/chromium"

export const isCi = () => {
  const value = (process.env["CI"] ?? "").trim().toLowerCase()
  return value !== "" && value !== "0" && value !== "false"
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error))

export default async function setup(): Promise<() => Promise<void>> {
  const started = performance.now()
  const running: Array<RunningServer> = []
  const failures: Array<[ServerName, string]> = []
  const stopAll = async () => {
    const stopping = performance.now()
    await Promise.all(running.splice(0).map((server) => server.stop().catch((error) => log(`stopping ${server.describe}: ${message(error)}`))))
    log(`stopped in ${secondsSince(stopping)}`)
  }
  // If vitest's process goes away without running the teardown, the servers go with it.
  const stopNow = () => running.forEach((server) => server.stopNow())
  process.once("exit", stopNow)

  const skipped = new Set((process.env["TEST_SERVERS_SKIP"] ?? "").split(",").map((name) => name.trim()).filter(Boolean))
  const attempt = async (name: ServerName, start: () => Promise<RunningServer>) => {
    try {
      if (skipped.has(name)) throw new Error(`not started: TEST_SERVERS_SKIP=${process.env["TEST_SERVERS_SKIP"]}`)
      const server = await start()
      running.push(server)
      Object.assign(process.env, server.env)
    } catch (error) {
      failures.push([name, message(error)])
    }
  }

  // s3rver needs nothing from apt: it starts while the packages (if missing) install.
  const s3 = process.env["TEST_S3_ENDPOINT"]
    ? Promise.resolve(presetS3())
    : attempt("s3", startS3)

  const presetPostgres = process.env["TEST_POSTGRES_URL"] !== undefined
  const presetRedis = process.env["TEST_REDIS_URL"] !== undefined
  const missing = [
    ...(presetPostgres || skipped.has("postgres") || findPostgresBinDir() !== undefined ? [] : ["postgresql"]),
    ...(presetRedis || skipped.has("redis") || findRedisServer() !== undefined ? [] : ["redis-server"]),
    ...(process.env["TEST_CHROMIUM"] !== undefined || skipped.has("chromium") || fs.existsSync(CHROMIUM) ? [] : ["chromium"])
  ]
  const installed = await installDebianPackages(missing).then(() => undefined, (error) => message(error))

  const postgres = presetPostgres
    ? Promise.resolve(log(`postgres: using TEST_POSTGRES_URL from the environment`))
    : attempt("postgres", async () => {
      const binDir = findPostgresBinDir()
      if (binDir === undefined) throw new Error(`PostgreSQL's programs (initdb, pg_ctl) not found: ${installed ?? "install the postgresql package"}`)
      return startPostgres(binDir)
    })
  const redis = presetRedis
    ? Promise.resolve(log(`redis: using TEST_REDIS_URL from the environment`))
    : attempt("redis", async () => {
      const binary = findRedisServer()
      if (binary === undefined) throw new Error(`redis-server not found: ${installed ?? "install the redis-server package"}`)
      return startRedis(binary)
    })
  const chromium = attempt("chromium", async () => {
    const binary = process.env["TEST_CHROMIUM"] ?? CHROMIUM
    if (!fs.existsSync(binary)) throw new Error(`${binary} not found: ${installed ?? "install the chromium package"}`)
    return { describe: `chromium (${binary})`, env: { TEST_CHROMIUM: binary }, stop: async () => {}, stopNow: () => {} }
  })
  await Promise.all([s3, postgres, redis, chromium])

  for (const [name, reason] of failures) process.env[unavailableVariable[name]] = reason
  if (failures.length > 0) {
    const lines = failures.map(([name, reason]) => `  ${name}: ${reason.split("\n").join("\n    ")}`).join("\n")
    if (isCi()) {
      await stopAll()
      throw new Error(`test servers could not start, and CI=true allows no skipped suite:\n${lines}`)
    }
    console.warn(
      `\n${"!".repeat(78)}\n[test servers] NOT AVAILABLE — the suites that need them will be SKIPPED:\n${lines}\n` +
        `(with CI=true this fails the run)\n${"!".repeat(78)}\n`
    )
  }
  log(`ready in ${secondsSince(started)}`)
  return async () => {
    process.removeListener("exit", stopNow)
    await stopAll()
  }
}

const presetS3 = () => {
  process.env["TEST_S3_BUCKET"] ??= S3_BUCKET
  process.env["TEST_S3_REGION"] ??= S3_REGION
  process.env["TEST_S3_ACCESS_KEY_ID"] ??= S3_ACCESS_KEY_ID
  process.env["TEST_S3_SECRET_ACCESS_KEY"] ??= S3_SECRET_ACCESS_KEY
  log(`s3: using TEST_S3_ENDPOINT from the environment`)
}
