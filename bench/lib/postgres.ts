/**
 * Postgres for the benchmarks: the test suite's throwaway server (test/support/servers/:
 * installed with apt-get when missing, as root; started on loopback in a temp dir with
 * fsync and synchronous_commit off; stopped at the end), or yours when TEST_POSTGRES_URL is set.
 * Each target gets a fresh database of its own on it.
 */
import { installDebianPackages } from "../../test/support/servers/packages.js"
import { findPostgresBinDir, startPostgres } from "../../test/support/servers/postgres.js"
import { freshPostgresUrlPromise } from "../../test/support/servers/postgresDatabase.js"
import { cleanUpAtExit } from "./processes.js"
import { postmasterPid } from "./proc.js"

export interface BenchPostgres {
  readonly describe: string
  /** The postmaster: its CPU and its backends' is what the targets make Postgres spend. */
  readonly pid: number | undefined
  /** A new, empty database and its URL. */
  readonly freshDatabase: (label: string) => Promise<string>
  readonly stop: () => Promise<void>
}

export const startBenchPostgres = async (): Promise<BenchPostgres> => {
  const preset = process.env["TEST_POSTGRES_URL"]
  if (preset !== undefined && preset !== "") {
    return { describe: `TEST_POSTGRES_URL (${preset})`, pid: undefined, freshDatabase: freshPostgresUrlPromise, stop: async () => {} }
  }
  if (findPostgresBinDir() === undefined) await installDebianPackages(["postgresql"])
  const binDir = findPostgresBinDir()
  if (binDir === undefined) throw new Error("PostgreSQL's programs (initdb, pg_ctl) are still missing after installing the postgresql package")
  const server = await startPostgres(binDir)
  cleanUpAtExit(server.stopNow)
  Object.assign(process.env, server.env) // freshPostgresUrl reads TEST_POSTGRES_URL
  const url = server.env["TEST_POSTGRES_URL"]!
  return { describe: server.describe, pid: postmasterPid(Number(new URL(url).port)), freshDatabase: freshPostgresUrlPromise, stop: server.stop }
}
