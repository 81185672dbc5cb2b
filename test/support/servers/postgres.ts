import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { firstExecutable, freePort, isRoot, log, onPath, removeDir, run, type RunningServer, secondsSince, serverDir } from "./common.js"

/**
 * A throwaway PostgreSQL cluster: `initdb` in a temporary directory, `pg_ctl start` on
 * 127.0.0.1 and a free port, trust authentication (loopback only), durability off (fsync,
 * synchronous_commit, full_page_writes: a crash loses nothing we need). As root it runs as
 * the `postgres` OS user, since initdb and postgres refuse to run as root.
 *
 * Its collation is ICU's en-US, as on a typical production server, not the byte order of
 * `C`: queries that rely on how text sorts must say so (see the Store's 0008 migration).
 */

/** The directory of Postgres' server programs: 15 (Debian bookworm's) when there, else the newest. */
export const findPostgresBinDir = (): string | undefined => {
  const fromEnv = process.env["POSTGRES_BIN_DIR"]
  if (fromEnv && firstExecutable([path.join(fromEnv, "initdb")])) return fromEnv
  const debian = "/usr/lib/postgresql"
  const versions = fs.existsSync(debian)
    ? fs.readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a))
    : []
  const ordered = versions.includes("15") ? ["15", ...versions.filter((v) => v !== "15")] : versions
  for (const version of ordered) {
    const dir = path.join(debian, version, "bin")
    if (firstExecutable([path.join(dir, "initdb"), path.join(dir, "pg_ctl")])) return dir
  }
  const initdb = onPath("initdb")
  return initdb === undefined ? undefined : path.dirname(fs.realpathSync(initdb))
}

const userIds = (name: string) => {
  try {
    const uid = Number(execFileSync("id", ["-u", name], { encoding: "utf8" }).trim())
    const gid = Number(execFileSync("id", ["-g", name], { encoding: "utf8" }).trim())
    return { uid, gid }
  } catch {
    return undefined
  }
}

export const startPostgres = async (binDir: string): Promise<RunningServer> => {
  const root = isRoot()
  const owner = root ? userIds("postgres") : undefined
  if (root && owner === undefined) throw new Error("running as root, but there is no `postgres` OS user to run the server as")
  const dir = serverDir("postgres")
  if (owner) fs.chownSync(dir, owner.uid, owner.gid)
  const dataDir = path.join(dir, "data")
  const logFile = path.join(dir, "server.log")
  /** Runs one of Postgres' programs, as `postgres` when we are root. */
  const pg = (program: string, args: ReadonlyArray<string>) => {
    const file = path.join(binDir, program)
    return root ? run("runuser", ["-u", "postgres", "--", file, ...args], { cwd: dir }) : run(file, args, { cwd: dir })
  }
  const stopNow = () => {
    try {
      const file = path.join(binDir, "pg_ctl")
      const args = ["stop", "-D", dataDir, "-m", "immediate", "-w"]
      execFileSync(root ? "runuser" : file, root ? ["-u", "postgres", "--", file, ...args] : args, { stdio: "ignore", cwd: dir })
    } catch {
      // Not running (any more).
    }
    removeDir(dir)
  }

  try {
    const initStart = performance.now()
    await pg("initdb", [
      "-D", dataDir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-sync",
      "--locale=C.UTF-8", "--locale-provider=icu", "--icu-locale=en-US"
    ])
    const initTime = secondsSince(initStart)

    const startStart = performance.now()
    let lastError: unknown
    for (let attempt = 1; attempt <= 3; attempt++) {
      const port = await freePort()
      const options = [
        `-p ${port}`, "-h 127.0.0.1", `-k ${dir}`,
        "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off", "-c max_connections=200"
      ].join(" ")
      try {
        await pg("pg_ctl", ["start", "-D", dataDir, "-l", logFile, "-w", "-t", "30", "-o", options])
      } catch (error) {
        // Another program may have taken the port between our look and the server's bind.
        lastError = new Error(`${String(error)}\n${readTail(logFile)}`)
        continue
      }
      const { stdout } = await pg("postgres", ["--version"])
      const version = stdout.trim().replace(/^postgres \(PostgreSQL\) /, "")
      log(`postgres ${version} on 127.0.0.1:${port} (initdb ${initTime}, start ${secondsSince(startStart)})`)
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`
      return {
        env: { TEST_POSTGRES_URL: url },
        describe: `postgres ${version} at ${url}`,
        // An outage and the recovery from it: the same server, the same port, the same data.
        pause: async () => void await pg("pg_ctl", ["stop", "-D", dataDir, "-m", "fast", "-w"]),
        resume: async () => void await pg("pg_ctl", ["start", "-D", dataDir, "-l", logFile, "-w", "-t", "30", "-o", options]),
        stop: async () => {
          await pg("pg_ctl", ["stop", "-D", dataDir, "-m", "fast", "-w"]).catch(() => undefined)
          removeDir(dir)
        },
        stopNow
      }
    }
    throw lastError
  } catch (error) {
    stopNow()
    throw error
  }
}

const readTail = (file: string) => {
  try {
    return fs.readFileSync(file, "utf8").trim().split("\n").slice(-10).join("\n")
  } catch {
    return ""
  }
}
