import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import { tempDir } from "./support/gateway.js"
import { useGatewayProcesses } from "./support/process.js"

/**
 * What the built gateway (`npm start`: dist/bundle/main.js) loads before it listens: the code
 * of the backends it was not configured for (Postgres, Redis, S3, the cluster, the Baileys
 * engine) stays on disk, each loaded only by the settings that use it. What it saves is start-up
 * time (`npm run bench:startup`); here, which modules a start loads.
 */

const spawnGateway = useGatewayProcesses()
const moduleLog = pathToFileURL(path.resolve("test/support/moduleLog.mjs")).href

/** A gateway started with `env`, and the modules (file URLs) it has loaded so far. */
const startLogged = async (env: Record<string, string>) => {
  const dir = tempDir("switchboard-loads-")
  const log = path.join(dir, "modules.log")
  const gateway = await spawnGateway({
    dataDir: path.join(dir, "data"),
    env: { ...env, NODE_OPTIONS: `--import ${moduleLog}`, MODULE_LOG: log },
    startTimeoutMs: 60_000
  })
  return { gateway, loaded: () => fs.readFileSync(log, "utf8").split("\n").filter((url) => url !== "") }
}

/** The modules a gateway started with `env` loaded by the time it listened. */
const loadedToStart = async (env: Record<string, string>) => {
  const { gateway, loaded } = await startLogged(env)
  await gateway.kill()
  return loaded()
}

/**
 * The backends a gateway may load, each by its chunk of the bundle and its packages, and (the
 * cluster) by its packages' code in whichever chunk of the bundle it sits: the bundler's source
 * comments (`// node_modules/@effect/cluster/…`) name the package. Once in a chunk shared with what
 * every start needs, @effect/cluster and @effect/rpc's servers and clients were parsed by every
 * start though only CLUSTER=on uses them. (scripts/bundle.mjs refuses such a build as well.)
 */
const clusterCode = /^\/\/ \S*node_modules\/@effect\/(cluster\/|rpc\/dist\/esm\/(RpcServer|RpcClient)\.js)/m

const backends: Record<string, { readonly files: RegExp; readonly bundledCode?: RegExp }> = {
  postgres: { files: /\/dist\/bundle\/PgStore-|\/node_modules\/pg\// },
  redis: { files: /\/dist\/bundle\/RedisCache-|\/node_modules\/ioredis\// },
  s3: { files: /\/dist\/bundle\/S3MediaStore-|\/node_modules\/@aws-sdk\// },
  cluster: { files: /\/dist\/bundle\/ClusterTopology-/, bundledCode: clusterCode },
  baileys: { files: /\/dist\/bundle\/BaileysEngine-|\/node_modules\/@whiskeysockets\/baileys\// }
}

const bundleDir = path.resolve("dist/bundle")

/** Whether any of the bundle's chunks among `urls` holds `code`. */
const bundleHolds = (urls: ReadonlyArray<string>, code: string | RegExp) =>
  urls.filter((url) => /\/dist\/bundle\//.test(url)).some((url) => {
    const text = fs.readFileSync(fileURLToPath(url), "utf8")
    return typeof code === "string" ? text.includes(code) : code.test(text)
  })

const loadedBackends = (urls: ReadonlyArray<string>) =>
  Object.entries(backends)
    .filter(([, { bundledCode, files }]) =>
      urls.some((url) => files.test(url)) || (bundledCode !== undefined && bundleHolds(urls, bundledCode)))
    .map(([name]) => name)

describe("starting the built gateway", () => {
  it("on the embedded defaults with the sandbox engine, loads none of the other backends", async () => {
    const urls = await loadedToStart({ ENGINE: "sandbox" })
    expect(urls.some((url) => url.endsWith("/dist/bundle/main.js")), "the log saw the gateway start").toBe(true)
    expect(loadedBackends(urls)).toEqual([])
    // …and the cluster's code is found where it is: the search above would find it elsewhere.
    const clusterChunk = fs.readdirSync(bundleDir).filter((file) => /^ClusterTopology-.*\.js$/.test(file))
    expect(bundleHolds(clusterChunk.map((file) => pathToFileURL(path.join(bundleDir, file)).href), clusterCode)).toBe(true)
  }, 90_000)

  it("loads the API's Swagger UI page (2 MB of script) at its first request, not at start", async () => {
    const { gateway, loaded } = await startLogged({ ENGINE: "sandbox" })
    const swaggerPage = (urls: ReadonlyArray<string>) => urls.some((url) => /\/dist\/bundle\/swaggerPage-/.test(url))
    // The script itself, in whichever chunk the bundler put it: once in a chunk shared with
    // what the API needs at start, it was parsed by every start (~50 ms) though no page was asked for.
    const swaggerScript = (urls: ReadonlyArray<string>) => bundleHolds(urls, "swagger-ui-bundle.js.LICENSE")
    expect(swaggerPage(loaded())).toBe(false)
    expect(swaggerScript(loaded())).toBe(false)
    const docs = await gateway.call("GET", "/api/docs", { key: null })
    expect(docs.status).toBe(200)
    expect(docs.body).toContain("SwaggerUIBundle")
    expect(swaggerPage(loaded())).toBe(true)
    expect(swaggerScript(loaded())).toBe(true)
    await gateway.kill()
  }, 90_000)

  it("with the Baileys engine, loads that engine and still none of the other backends", async () => {
    const urls = await loadedToStart({ ENGINE: "baileys" })
    expect(loadedBackends(urls)).toEqual(["baileys"])
  }, 90_000)
})
