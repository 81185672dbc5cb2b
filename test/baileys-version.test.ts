import { DEFAULT_CONNECTION_CONFIG } from "@whiskeysockets/baileys"
import { ConfigProvider, Effect, Exit, Option, Scope } from "effect"
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { settingsConfig } from "../src/app/Config.js"
import { BaileysEngineLive } from "../src/entry/baileys.js"
import { waVersionIn } from "../src/runtime/engines/baileys/waVersion.js"
import { eventually, startGatewayWith, TEST_KEY, tempDir, type TestGateway } from "./support/gateway.js"
import { useGatewayProcesses } from "./support/process.js"
import { startWaPeer, type WaPeer } from "./support/wa-peer/index.js"

/**
 * WA_VERSION (issue 21): the WhatsApp Web version the Baileys engine presents, against the
 * loopback peer told to refuse anything older than one build past Baileys' own, as WhatsApp
 * refuses an outdated client (`<failure reason="405">`). With Baileys' built-in version the
 * session fails at once as CLIENT_OUTDATED and says what to set; with WA_VERSION at the
 * peer's minimum it is let in and shows its QR. Health and the session show the version.
 */

const builtIn = DEFAULT_CONNECTION_CONFIG.version
const current: readonly [number, number, number] = [builtIn[0], builtIn[1], builtIn[2] + 1]

let peer: WaPeer
const scopes: Array<Scope.CloseableScope> = []

beforeAll(async () => {
  peer = await startWaPeer({ minVersion: current })
})
afterAll(async () => {
  for (const scope of scopes) await Effect.runPromise(Scope.close(scope, Exit.void))
  await peer.close()
})

const gatewayPresenting = async (waVersion: `${number}.${number}.${number}` | undefined): Promise<Omit<TestGateway, "network">> => {
  const scope = await Effect.runPromise(Scope.make())
  scopes.push(scope)
  const dataDir = tempDir("switchboard-baileys-version-")
  return Effect.runPromise(Scope.extend(
    startGatewayWith(BaileysEngineLive({ waWebSocketUrl: peer.url, mediaCa: peer.mediaCa, waVersion }), {
      dataDir,
      databaseUrl: `sqlite:${dataDir}/switchboard.db`,
      engine: "baileys"
    }),
    scope
  ))
}

describe("the WhatsApp Web version (WA_VERSION)", () => {
  it("an outdated version is refused: the session fails at once with CLIENT_OUTDATED and says to set WA_VERSION", async () => {
    const gateway = await gatewayPresenting(undefined)
    expect((await gateway.call("GET", "/api/health", { key: null })).body.engine).toEqual({ name: "baileys", waVersion: builtIn.join(".") })
    const created = await gateway.call("POST", "/api/sessions", { body: { name: "outdated", autoStart: true } })
    const failed = await eventually(() => gateway.call("GET", `/api/sessions/${created.body.id}`), (r) => r.body.status === "failed", 15_000)
    expect(failed.body.lastError.code).toBe("CLIENT_OUTDATED")
    expect(failed.body.lastError.message).toContain("WA_VERSION")
    expect(failed.body.waVersion).toBe(builtIn.join("."))
  }, 30_000)

  it("WA_VERSION at the server's minimum is let in: the session shows its QR, with that version", async () => {
    const gateway = await gatewayPresenting(`${current[0]}.${current[1]}.${current[2]}` as const)
    expect((await gateway.call("GET", "/api/health", { key: null })).body.engine).toEqual({ name: "baileys", waVersion: current.join(".") })
    const created = await gateway.call("POST", "/api/sessions", { body: { name: "current", autoStart: true } })
    const qr = await eventually(() => gateway.call("GET", `/api/sessions/${created.body.id}/qr`), (r) => r.status === 200, 15_000)
    // The QR carries one of the refs the peer handed this client at its registration.
    expect(qr.body.qr).toContain("2@")
    expect((await gateway.call("GET", `/api/sessions/${created.body.id}`)).body.waVersion).toBe(current.join("."))
  }, 30_000)

  it("WA_VERSION is read as three numbers; anything else stops the start with the reason", () => {
    const read = (env: Record<string, string>) =>
      Effect.runSyncExit(settingsConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))
    const given = read({ WA_VERSION: "2.3000.1029000000" })
    expect(Exit.isSuccess(given) && given.value.waVersion).toEqual(Option.some("2.3000.1029000000"))
    const unset = read({})
    expect(Exit.isSuccess(unset) && unset.value.waVersion).toEqual(Option.none())
    for (const bad of ["2.3000", "latest", "2.3000.x"]) {
      const refused = read({ WA_VERSION: bad })
      expect(Exit.isFailure(refused), bad).toBe(true)
      expect(String(Exit.isFailure(refused) ? refused.cause : ""), bad).toContain("WA_VERSION must look like 2.3000.1029000000")
    }
  })
})

/** A loopback page for WA_VERSION_URL: web.whatsapp.com's service worker as it names its build, or a 404. */
const versionPages = async () => {
  const server: Server = createServer((request, response) => {
    if (request.url === "/sw.js") {
      response.end('self.__swData=JSON.parse(/*BTDS*/"{\\"dynamic_data\\":{},\\"client_revision\\":1029000123,\\"other\\":1}");')
    } else {
      response.statusCode = 404
      response.end("no such page")
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  return { url: (page: string) => `http://127.0.0.1:${port}${page}`, close: () => new Promise((resolve) => server.close(resolve)) }
}

describe("WA_VERSION_URL, read once at start by the built gateway", () => {
  const spawnGateway = useGatewayProcesses()
  let pages: Awaited<ReturnType<typeof versionPages>>
  beforeAll(async () => {
    pages = await versionPages()
  })
  afterAll(() => pages.close())

  const versionShown = async (env: Record<string, string>) => {
    const gateway = await spawnGateway({ dataDir: tempDir("switchboard-wa-version-url-"), env: { API_KEY: TEST_KEY, ENGINE: "baileys", ...env } })
    const health = await gateway.call("GET", "/api/health", { key: null })
    await gateway.kill()
    return health.body.engine.waVersion as string
  }

  it("presents the version the page names; the built-in one when the page cannot be read; WA_VERSION over both", async () => {
    expect(await versionShown({ WA_VERSION_URL: pages.url("/sw.js") })).toBe("2.3000.1029000123")
    expect(await versionShown({ WA_VERSION_URL: pages.url("/missing") })).toBe(builtIn.join("."))
    expect(await versionShown({ WA_VERSION_URL: pages.url("/sw.js"), WA_VERSION: "2.3000.1029000999" })).toBe("2.3000.1029000999")
  }, 60_000)

  it("finds the version in plain text, in JSON, and in the service worker's client_revision", () => {
    expect(waVersionIn("2.3000.1029000000\n")).toEqual(Option.some("2.3000.1029000000"))
    expect(waVersionIn('{"currentVersion":"2.3000.1030000001"}')).toEqual(Option.some("2.3000.1030000001"))
    expect(waVersionIn('"client_revision":1029000777,')).toEqual(Option.some("2.3000.1029000777"))
    expect(waVersionIn("<html>maintenance</html>")).toEqual(Option.none())
  })
})
