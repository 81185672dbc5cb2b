import * as fs from "node:fs"
import { isRoot, log, run, secondsSince } from "./common.js"

/**
 * Installs Debian packages that a test server needs and the machine lacks: only with apt-get,
 * only as root, and only when their programs are missing (a machine that has them pays nothing).
 * `postgresql` is PostgreSQL 15 on Debian bookworm, `redis-server` Redis 7. Services do not
 * matter: the tests start their own servers, never the packaged ones.
 */
export const installDebianPackages = async (packages: ReadonlyArray<string>): Promise<void> => {
  if (packages.length === 0) return
  if (process.platform !== "linux" || !fs.existsSync("/usr/bin/apt-get")) {
    throw new Error(`${packages.join(", ")} missing, and this is not a Debian machine (no apt-get): install them yourself`)
  }
  if (!isRoot()) {
    throw new Error(`${packages.join(", ")} missing, and not running as root: run \`sudo apt-get install -y ${packages.join(" ")}\``)
  }
  const started = performance.now()
  log(`installing ${packages.join(", ")} with apt-get (their programs are missing) …`)
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  const options = { env, timeout: 15 * 60_000 }
  await run("apt-get", ["update", "-qq"], options)
  const updated = secondsSince(started)
  await run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...packages], options)
  log(`installed ${packages.join(", ")} in ${secondsSince(started)} (apt-get update ${updated})`)
}
