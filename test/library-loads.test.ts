import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import { tempDir } from "./support/gateway.js"

/**
 * What importing the built library loads (package.json "exports": dist/index.js and the files of
 * src/entry/): the core loads none of the optional backends, and each backend's entry loads its
 * own, so that a program pays, at import, only for what it chose. Each import runs in a fresh
 * Node process with the module log of test/support/moduleLog.mjs.
 */

const moduleLog = pathToFileURL(path.resolve("test/support/moduleLog.mjs")).href

/** The backends, by their packages and by our modules that import them. */
const backends = {
  baileys: /\/node_modules\/@whiskeysockets\/baileys\/|\/dist\/runtime\/engines\/baileys\//,
  postgres: /\/node_modules\/pg\/|\/dist\/layers\/store\/PgStore\.js$/,
  redis: /\/node_modules\/ioredis\/|\/dist\/layers\/cache\/RedisCache\.js$/,
  s3: /\/node_modules\/@aws-sdk\/|\/dist\/layers\/media\/S3MediaStore\.js$/,
  // The gateway itself: what a client of the contract (a browser app, another service) must not
  // carry: the runtime, the services, the layers, Node's HTTP server and the metrics registry.
  gateway: /\/dist\/(runtime|services|layers)\/|\/node_modules\/@effect\/platform-node\/|\/node_modules\/prom-client\//
}

/** The backends a fresh process loaded by importing the built module `file` (under dist/). */
const backendsLoadedBy = async (file: string) => {
  const log = path.join(tempDir("switchboard-library-loads-"), "modules.log")
  const url = pathToFileURL(path.resolve("dist", file)).href
  await new Promise<void>((resolve, reject) =>
    execFile(
      process.execPath,
      ["--import", moduleLog, "--input-type=module", "-e", `await import(${JSON.stringify(url)})`],
      { env: { ...process.env, MODULE_LOG: log }, timeout: 60_000 },
      (error, _stdout, stderr) => (error === null ? resolve() : reject(new Error(`importing ${file} failed: ${stderr}`)))
    )
  )
  const urls = fs.readFileSync(log, "utf8").split("\n")
  expect(urls, "the log saw the import").toContain(url)
  return Object.entries(backends).filter(([, pattern]) => urls.some((loaded) => pattern.test(loaded))).map(([name]) => name)
}

describe("importing the built library", () => {
  it.each([
    ["the core (switchboard)", "index.js", ["gateway"]],
    ["switchboard/http", "entry/http.js", ["gateway"]],
    // The contract and its client alone: nothing of the gateway.
    ["switchboard/client", "entry/client.js", []],
    ["switchboard/engines/sandbox", "entry/sandbox.js", ["gateway"]],
    // ioredis is loaded when the layer is built, not when its entry is imported.
    ["switchboard/cache/redis", "entry/redis.js", ["gateway"]],
    ["switchboard/store/postgres", "entry/postgres.js", ["postgres", "gateway"]],
    ["switchboard/media/s3", "entry/s3.js", ["s3", "gateway"]],
    ["switchboard/engines/baileys", "entry/baileys.js", ["baileys", "gateway"]]
  ])("%s loads only the backends it is for", async (_entry, file, expected) => {
    expect(await backendsLoadedBy(file)).toEqual(expected)
  }, 60_000)
})
