import { Duration, Effect, Exit, Option, Scope } from "effect"
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { eventually, readySession, startGateway, TEST_KEY, type TestGateway, tempDir } from "./support/gateway.js"
import { base64, png } from "./support/mediaSamples.js"
import { unavailable } from "./support/servers/availability.js"
import { freshPostgresUrlPromise } from "./support/servers/postgresDatabase.js"

/**
 * `switchboard migrate` between backends, through the built CLI: everything a gateway kept
 * moves, and a linked session keeps working on the new backend without linking again.
 */

const mainScript = path.resolve("dist/bundle/main.js")
const migrate = (...args: Array<string>) => {
  const run = spawnSync(process.execPath, [mainScript, "migrate", ...args], { encoding: "utf8", timeout: 60_000, env: process.env })
  return { status: run.status, output: `${run.stdout}${run.stderr}` }
}

/** A gateway on the given store and media, for as long as `use` runs. */
const withGateway = async <A>(databaseUrl: string, mediaUrl: string, dataDir: string, use: (gateway: TestGateway) => Promise<A>) => {
  const scope = await Effect.runPromise(Scope.make())
  try {
    const gateway = await Effect.runPromise(Scope.extend(startGateway({
      dataDir,
      databaseUrl,
      media: { url: Option.some(mediaUrl), maxBytes: 1024 * 1024, allowPrivate: false, fetchTimeout: Duration.seconds(5), incoming: "store", keepRevoked: false }
    }), scope))
    return await use(gateway)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

describe("switchboard migrate", () => {
  it("copies a SQLite store and its media to another, refuses a non-empty target, and the sessions work there", async () => {
    const dir = tempDir("switchboard-migrate-")
    const source = { db: `sqlite:${dir}/a.db`, media: `file:${dir}/media-a` }
    const target = { db: `sqlite:${dir}/b.db`, media: `file:${dir}/media-b` }
    const image = png("migrated")

    const before = await withGateway(source.db, source.media, dir, async (gateway) => {
      const alpha = await readySession(gateway, "mig-alpha")
      const beta = await readySession(gateway, "mig-beta")
      await gateway.call("POST", `/api/sessions/${alpha.id}/messages/send-text`, { body: { chatId: beta.phone, text: "before the move" } })
      const sent = await gateway.call("POST", `/api/sessions/${alpha.id}/messages/send-image`, { body: { chatId: beta.phone, media: { data: base64(image) } } })
      await eventually(() => gateway.call("GET", `/api/sessions/${beta.id}/messages?direction=in`), (r) => r.body.data.length === 2)
      return { alpha, beta, imageId: sent.body.messageId as string }
    })

    const first = migrate("--from", source.db, "--to", target.db, "--media-from", source.media, "--media-to", target.media)
    expect(first.output).toContain("verified")
    expect(first.status).toBe(0)
    expect(first.output).toMatch(/messages\s+\d+ rows/)

    const again = migrate("--from", source.db, "--to", target.db)
    expect(again.status).not.toBe(0)
    expect(again.output).toContain("--force")
    const forced = migrate("--from", source.db, "--to", target.db, "--media-from", source.media, "--media-to", target.media, "--force")
    expect([forced.status, forced.output.includes("verified")]).toEqual([0, true])
    expect(migrate("--from", source.db).status).toBe(2)

    await withGateway(target.db, target.media, dir, async (gateway) => {
      // Linked without a QR: the credentials moved with the sessions.
      for (const session of [before.alpha, before.beta]) {
        await eventually(() => gateway.call("GET", `/api/sessions/${session.id}`), (r) => r.body.status === "ready")
      }
      const history = await gateway.call("GET", `/api/sessions/${before.beta.id}/messages?direction=in`)
      expect(history.body.data.map((m: { type: string }) => m.type).sort()).toEqual(["image", "text"])
      const media = await fetch(`${gateway.baseUrl}/api/sessions/${before.alpha.id}/messages/${before.imageId}/media`, { headers: { "x-api-key": TEST_KEY } })
      expect(Buffer.from(await media.arrayBuffer()).equals(Buffer.from(image))).toBe(true)
      await gateway.call("POST", `/api/sessions/${before.alpha.id}/messages/send-text`, { body: { chatId: before.beta.phone, text: "after the move" } })
      await eventually(() => gateway.call("GET", `/api/sessions/${before.beta.id}/messages?direction=in`), (r) => r.body.data.length === 3)
    })
  }, 90_000)

  const serversMissing = unavailable("postgres", "migrate to Postgres and S3") ?? unavailable("s3", "migrate to Postgres and S3")
  it.skipIf(serversMissing !== undefined)("SQLite and disk → Postgres and S3 → SQLite and disk: the session keeps working at each stop", async () => {
    const env = process.env
    // The CLI and the gateway read S3 credentials from the usual AWS variables.
    env["AWS_ACCESS_KEY_ID"] = env["TEST_S3_ACCESS_KEY_ID"]
    env["AWS_SECRET_ACCESS_KEY"] = env["TEST_S3_SECRET_ACCESS_KEY"]
    const dir = tempDir("switchboard-migrate-pg-")
    const s3 = `s3://${env["TEST_S3_BUCKET"]}/migrate-${Date.now()}?region=${env["TEST_S3_REGION"]}&endpoint=${encodeURIComponent(env["TEST_S3_ENDPOINT"]!)}&forcePathStyle=true`
    const stops = [
      { db: `sqlite:${dir}/a.db`, media: `file:${dir}/media-a` },
      { db: await freshPostgresUrlPromise("migrate"), media: s3 },
      { db: `sqlite:${dir}/c.db`, media: `file:${dir}/media-c` }
    ] as const
    const image = png("travels")
    const session = await withGateway(stops[0].db, stops[0].media, dir, async (gateway) => {
      const alpha = await readySession(gateway, "travel-alpha")
      const beta = await readySession(gateway, "travel-beta")
      const sent = await gateway.call("POST", `/api/sessions/${alpha.id}/messages/send-image`, { body: { chatId: beta.phone, media: { data: base64(image) } } })
      await eventually(() => gateway.call("GET", `/api/sessions/${beta.id}/messages?direction=in`), (r) => r.body.data.length === 1)
      return { alpha, beta, imageId: sent.body.messageId as string }
    })
    for (const [index, [from, to]] of [[stops[0], stops[1]], [stops[1], stops[2]]].entries()) {
      const moved = migrate("--from", from.db, "--to", to.db, "--media-from", from.media, "--media-to", to.media)
      expect([moved.status, moved.output.includes("verified")], moved.output).toEqual([0, true])
      await withGateway(to.db, to.media, dir, async (gateway) => {
        await eventually(() => gateway.call("GET", `/api/sessions/${session.alpha.id}`), (r) => r.body.status === "ready")
        const media = await fetch(`${gateway.baseUrl}/api/sessions/${session.alpha.id}/messages/${session.imageId}/media`, { headers: { "x-api-key": TEST_KEY } })
        expect(Buffer.from(await media.arrayBuffer()).equals(Buffer.from(image))).toBe(true)
        const text = `at stop ${index + 2}`
        await gateway.call("POST", `/api/sessions/${session.alpha.id}/messages/send-text`, { body: { chatId: session.beta.phone, text } })
        await eventually(
          () => gateway.call("GET", `/api/sessions/${session.beta.id}/messages?direction=in`),
          (r) => r.body.data.some((m: { text: string }) => m.text === text)
        )
      })
    }
  }, 120_000)
})
