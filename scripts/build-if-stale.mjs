#!/usr/bin/env node
// `npm start`'s prestart: builds only when a source is newer than the build, so starting an
// already built, unchanged tree does not spend ~25 s compiling before it listens.
//
//   node scripts/build-if-stale.mjs            build if stale (npm run build), else say it is current
//   node scripts/build-if-stale.mjs --check    print "stale" or "current" and build nothing
//   (an optional last argument names the project root; default: this script's parent folder)

import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** What the build reads: a change to any of these makes the build stale. */
const inputs = [
  "src",
  "dashboard/src",
  "dashboard/index.html",
  "dashboard/vite.config.ts",
  "dashboard/tsconfig.json",
  "scripts/bundle.mjs",
  "package.json",
  "package-lock.json",
  "tsconfig.json"
]

/** What the build writes last for each of its steps (the server, its bundle, then the dashboard). */
const outputs = ["dist/main.js", "dist/bundle/main.js", "dist/dashboard/index.html"]

/** The newest modification time under `target` (a file or a folder), or -1 when it is absent. */
const newestUnder = (target) => {
  let stat
  try {
    stat = fs.statSync(target)
  } catch {
    return -1
  }
  if (!stat.isDirectory()) return stat.mtimeMs
  return fs.readdirSync(target).reduce((newest, entry) => Math.max(newest, newestUnder(path.join(target, entry))), stat.mtimeMs)
}

/** Stale when an output is missing or older than the newest input. */
export const isBuildStale = (root) => {
  const built = outputs.map((output) => newestUnder(path.join(root, output)))
  if (built.some((time) => time < 0)) return true
  const newestInput = Math.max(...inputs.map((input) => newestUnder(path.join(root, input))))
  return newestInput > Math.min(...built)
}

const args = process.argv.slice(2)
const check = args.includes("--check")
const root = args.find((arg) => !arg.startsWith("--")) ?? fileURLToPath(new URL("..", import.meta.url))

if (check) {
  console.log(isBuildStale(root) ? "stale" : "current")
} else if (isBuildStale(root)) {
  const built = spawnSync("npm", ["run", "build"], { cwd: root, stdio: "inherit", shell: process.platform === "win32" })
  process.exit(built.status ?? 1)
} else {
  console.log("build is current (no source newer than dist/): starting it as is")
}
