/**
 * In test files: whether a server of the globalSetup (./setup.ts) is there, and if not, why.
 * Use `unavailable("postgres")` with `describe.skipIf`: it warns loudly, once per file, when the
 * suite is skipped. (With CI=true the globalSetup fails instead, so nothing is skipped there.)
 */
export type TestServer = "postgres" | "redis" | "s3" | "chromium"

const variables: Record<TestServer, { readonly url: string; readonly unavailable: string }> = {
  postgres: { url: "TEST_POSTGRES_URL", unavailable: "TEST_POSTGRES_UNAVAILABLE" },
  redis: { url: "TEST_REDIS_URL", unavailable: "TEST_REDIS_UNAVAILABLE" },
  s3: { url: "TEST_S3_ENDPOINT", unavailable: "TEST_S3_UNAVAILABLE" },
  chromium: { url: "TEST_CHROMIUM", unavailable: "TEST_CHROMIUM_UNAVAILABLE" }
}

/** Why the server cannot be used, or undefined when it can. */
export const unavailableReason = (server: TestServer): string | undefined => {
  const { url, unavailable } = variables[server]
  if (process.env[url]) return undefined
  return process.env[unavailable] ??
    `${url} is not set (the globalSetup test/support/servers/setup.ts did not run: use vitest.config.ts)`
}

const warned = new Set<string>()

/**
 * The reason, after a loud warning naming what is skipped; undefined when the server is there.
 * `what` names the suite, e.g. "Store on Postgres".
 */
export const unavailable = (server: TestServer, what: string): string | undefined => {
  const reason = unavailableReason(server)
  if (reason !== undefined && !warned.has(`${server}:${what}`)) {
    warned.add(`${server}:${what}`)
    console.warn(`\n!!! SKIPPED: ${what} — ${server} is not available: ${reason.split("\n")[0]}\n`)
  }
  return reason
}

/** The server's URL (or S3 endpoint); throws when it is not there. */
export const serverUrl = (server: TestServer): string => {
  const value = process.env[variables[server].url]
  if (!value) throw new Error(`${server} is not available: ${unavailableReason(server)}`)
  return value
}
