import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { tempDir } from "./support/gateway.js"

/**
 * `npm start` builds first only when the build is stale (scripts/build-if-stale.mjs): a tree
 * whose dist/ is newer than every source starts at once; a source edited since, a dependency
 * change, or a missing build step builds again.
 */

const script = path.resolve("scripts/build-if-stale.mjs")
const verdict = (root: string) => spawnSync(process.execPath, [script, "--check", root], { encoding: "utf8" }).stdout.trim()

/** A project tree with sources and a build, every file dated `at` (seconds since the epoch). */
const project = (at: number) => {
  const root = tempDir()
  const files = ["src/main.ts", "src/http/Api.ts", "dashboard/src/main.tsx", "package.json", "dist/main.js", "dist/bundle/main.js", "dist/dashboard/index.html"]
  for (const file of files) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), "")
  }
  // Folders too: one's time changes when a file in it is added, removed or renamed, which is a change.
  const folders = new Set(files.flatMap((file) => path.dirname(file).split("/").map((_, i, parts) => parts.slice(0, i + 1).join("/"))))
  for (const entry of [...files, ...folders]) fs.utimesSync(path.join(root, entry), at, at)
  return root
}

const touch = (root: string, file: string, at: number) => fs.utimesSync(path.join(root, file), at, at)

describe("npm start's build step", () => {
  it("is skipped when the build is newer than every source", () => {
    const root = project(1_700_000_000)
    for (const output of ["dist/main.js", "dist/bundle/main.js", "dist/dashboard/index.html"]) touch(root, output, 1_700_000_100)
    expect(verdict(root)).toBe("current")
  })

  it("runs when a server or dashboard source, or package.json, changed after the build", () => {
    for (const source of ["src/http/Api.ts", "dashboard/src/main.tsx", "package.json"]) {
      const root = project(1_700_000_000)
      touch(root, source, 1_700_000_100)
      expect(verdict(root), source).toBe("stale")
    }
  })

  it("runs when a source was deleted (its folder changed) after the build", () => {
    const root = project(1_700_000_000)
    fs.rmSync(path.join(root, "src/http/Api.ts"))
    expect(verdict(root)).toBe("stale")
  })

  it("runs when any build step's output is missing", () => {
    for (const output of ["dist/main.js", "dist/bundle/main.js", "dist/dashboard/index.html"]) {
      const root = project(1_700_000_000)
      fs.rmSync(path.join(root, output))
      expect(verdict(root), output).toBe("stale")
    }
  })
})
