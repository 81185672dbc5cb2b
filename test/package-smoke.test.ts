import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TEST_KEY, tempDir } from "./support/gateway.js"
import { useGatewayProcesses } from "./support/process.js"

/**
 * The package as an Effect developer gets it: `npm pack`, installed into a new app that has an
 * effect of its own (3.22.3, not the 3.22.4 we build with) and the peers. The app type-checks
 * with `strict` and `skipLibCheck: false` (so our .d.ts files are checked too), then runs the
 * README's embedding example (examples/embedding.ts) and the typed client (examples/client.ts)
 * against the package's `switchboard` command.
 *
 * The install is most of the time: npm's cache holds the tarballs after the repository's own
 * install, but better-sqlite3 is compiled from source where no prebuilt binary can be fetched.
 */

const repo = path.resolve(import.meta.dirname, "..")
const APP_EFFECT = "3.22.3"
const ours = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as {
  readonly peerDependencies: Record<string, string>
  readonly devDependencies: Record<string, string>
  readonly exports: Record<string, unknown>
}

/** Runs a command to its end: its exit code and everything it printed. */
const run = (command: string, args: ReadonlyArray<string>, options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }) =>
  new Promise<{ readonly code: number; readonly output: string }>((resolve) => {
    execFile(command, args, { cwd: options.cwd, env: options.env ?? process.env, timeout: options.timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, output: stdout + stderr })
    })
  })

/** `run`, which must succeed: a failure carries everything the command printed. */
const succeed = async (command: string, args: ReadonlyArray<string>, options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }) => {
  const { code, output } = await run(command, args, options)
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${code}\n${output}`)
  return output
}

const spawnGateway = useGatewayProcesses()
const app = tempDir("switchboard-package-")
const packed = tempDir("switchboard-pack-")
let installSeconds = 0

const ourBetterSqlite = path.join(repo, "node_modules", "better-sqlite3")
const betterSqliteVersion = (JSON.parse(fs.readFileSync(path.join(ourBetterSqlite, "package.json"), "utf8")) as { version: string }).version

/**
 * The repository's own compiled better-sqlite3, offered to the app's install as a local prebuild
 * (prebuild-install looks there before downloading one): without it the install compiles it
 * from source again, two minutes of a CPU the other test files share. The app pins the same
 * version (`overrides`), as a binary only fits the version it was compiled from.
 */
const offerOurBetterSqlite = async (dir: string) => {
  const name = `better-sqlite3-v${betterSqliteVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  await succeed("tar", ["-czf", path.join(dir, name), "build/Release/better_sqlite3.node"], { cwd: ourBetterSqlite, timeoutMs: 30_000 })
  return { ...process.env, npm_config_better_sqlite3_local_prebuilds: dir }
}

/** An app's package.json: ours as the packed tarball, and the peers at the versions we build with but effect's. */
const appManifest = (tarball: string) => ({
  name: "switchboard-smoke-app",
  private: true,
  type: "module",
  dependencies: {
    switchboard: `file:${tarball}`,
    ...Object.fromEntries(Object.keys(ours.peerDependencies).map((name) => [name, ours.devDependencies[name]!])),
    effect: APP_EFFECT
  },
  // What an app that checks the declarations of its libraries needs for @effect/platform-node's (ws) and @effect/sql-pg's (pg).
  devDependencies: { "@types/node": ours.devDependencies["@types/node"]!, "@types/ws": "^8.5.0", "@types/pg": "^8.11.0" },
  overrides: { "better-sqlite3": betterSqliteVersion }
})

const appTsconfig = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    // @effect/platform's and @effect/rpc's declarations name DOM types (Transferable, Storage…).
    lib: ["ES2022", "DOM"],
    types: ["node"],
    strict: true,
    skipLibCheck: false,
    outDir: "dist",
    rootDir: "src"
  },
  include: ["src"]
}

/** Every subpath of the exports map, imported: type-checked with the rest, then loaded. */
const entriesModule = Object.keys(ours.exports)
  .filter((subpath) => subpath !== "./package.json")
  .map((subpath, index) => `export * as entry${index} from "${path.posix.join("switchboard", subpath)}"\n`)
  .join("")

beforeAll(async () => {
  expect(ours.devDependencies["effect"]).not.toBe(APP_EFFECT)
  // `prepare` runs first: it builds only when a source is newer than dist/ (after `npm test`'s build, not at all).
  await succeed("npm", ["pack", "--pack-destination", packed], { cwd: repo, timeoutMs: 300_000 })
  const tarball = path.join(packed, fs.readdirSync(packed).find((name) => name.endsWith(".tgz"))!)
  fs.writeFileSync(path.join(app, "package.json"), JSON.stringify(appManifest(tarball), null, 2))
  fs.writeFileSync(path.join(app, "tsconfig.json"), JSON.stringify(appTsconfig, null, 2))
  fs.mkdirSync(path.join(app, "src"))
  for (const example of ["embedding.ts", "client.ts"]) fs.copyFileSync(path.join(repo, "examples", example), path.join(app, "src", example))
  fs.writeFileSync(path.join(app, "src", "entries.ts"), entriesModule)
  const started = Date.now()
  const env = await offerOurBetterSqlite(packed)
  await succeed("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: app, env, timeoutMs: 600_000 })
  installSeconds = (Date.now() - started) / 1000
}, 900_000)

afterAll(() => {
  console.log(`[package smoke] npm install of the packed package took ${installSeconds.toFixed(1)} s`)
  for (const dir of [app, packed]) fs.rmSync(dir, { recursive: true, force: true })
})

const baileysOwn = /^node_modules\/(@whiskeysockets\/baileys|whatsapp-rust-bridge)\//

const appModule = (...segments: Array<string>) => path.join(app, "node_modules", ...segments)

describe("the packed package, installed into an app on another effect 3.x", () => {
  it("holds the built output only, and shares the app's one copy of effect", () => {
    const installed = appModule("switchboard")
    expect(fs.existsSync(path.join(installed, "dist", "index.js"))).toBe(true)
    expect(fs.existsSync(path.join(installed, "src"))).toBe(false)
    expect(fs.existsSync(path.join(installed, "test"))).toBe(false)
    expect(fs.readdirSync(path.join(installed, "dist"), { recursive: true }).filter((file) => String(file).endsWith(".map"))).toEqual([])
    const effect = JSON.parse(fs.readFileSync(appModule("effect", "package.json"), "utf8")) as { version: string }
    expect(effect.version).toBe(APP_EFFECT)
    expect(fs.existsSync(path.join(installed, "node_modules", "effect"))).toBe(false)
  })

  it("type-checks the examples against every entry with strict and skipLibCheck false", async () => {
    const { code, output } = await run(process.execPath, [path.join(repo, "node_modules", "typescript", "bin", "tsc"), "-p", "."], { cwd: app, timeoutMs: 300_000 })
    const errors = output.split("\n").filter((line) => /error TS\d+/.test(line))
    expect(code === 0 || errors.length > 0, output).toBe(true)
    // Baileys' own declarations do not pass under NodeNext (an import without its extension, a
    // type its WebAssembly bridge never declares); they are checked only through
    // `switchboard/engines/baileys`. Every other error counts, ours above all.
    expect(errors.filter((line) => !baileysOwn.test(line))).toEqual([])
  }, 300_000)

  it("loads every entry of the exports map", async () => {
    await succeed(process.execPath, ["dist/entries.js"], { cwd: app, timeoutMs: 120_000 })
  }, 120_000)

  it("runs the embedding example: a sandbox session pairs, sends, and hears the answer as a typed event", async () => {
    const output = await succeed(process.execPath, ["dist/embedding.js"], { cwd: app, timeoutMs: 120_000 })
    expect(output).toMatch(/session bot sent message \S+/)
    expect(output).toContain("15550007777@c.us answered: hi")
  }, 120_000)

  it("runs the typed client against the package's switchboard command", async () => {
    const gateway = await spawnGateway({
      dataDir: path.join(app, "gateway-data"),
      script: appModule(".bin", "switchboard"),
      env: { API_KEY: TEST_KEY },
      startTimeoutMs: 60_000
    })
    const output = await succeed(process.execPath, ["dist/client.js"], {
      cwd: app,
      env: { ...process.env, SWITCHBOARD_URL: gateway.baseUrl, SWITCHBOARD_API_KEY: TEST_KEY },
      timeoutMs: 60_000
    })
    expect(output).toMatch(/created session support-line \(\S+\)/)
    expect(output).toContain("sessions: support-line")
    expect(output).toContain("an unknown session: SESSION_NOT_FOUND")
    const listed = await gateway.call("GET", "/api/sessions")
    expect(JSON.stringify(listed.body)).toContain("support-line")
    await gateway.kill()
  }, 120_000)
})
