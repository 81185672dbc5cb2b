import { tempDir, TEST_KEY } from "./gateway.js"
import { type GatewayProcess, spawnGateway } from "./process.js"
import { serverUrl } from "./servers/availability.js"
import { freePort } from "./servers/common.js"
import { freshPostgresUrlPromise } from "./servers/postgresDatabase.js"

/**
 * Switchboard as a cluster of real processes (`CLUSTER=on`): runners on loopback over one
 * fresh Postgres database and the test Redis, each with its own API port and runner port.
 */

/** A port free on loopback right now (the runner binds it a moment later); kept here for the cluster tests. */
export { freePort }

export interface Runner extends GatewayProcess {
  readonly runnerPort: number
}

export interface TestCluster {
  readonly databaseUrl: string
  readonly runners: ReadonlyArray<Runner>
  /** Starts one more runner of this cluster. */
  readonly addRunner: (env?: Record<string, string | undefined>) => Promise<Runner>
}

/**
 * Starts `size` runners one after the other (each is listening before the next starts). `env`
 * applies to every runner; the processes are killed by `useGatewayProcesses`' cleanup.
 */
export const startCluster = async (
  size: number,
  env: Record<string, string | undefined> = {},
  label = "cluster"
): Promise<TestCluster> => {
  const databaseUrl = await freshPostgresUrlPromise(label)
  const runners: Array<Runner> = []
  const addRunner = async (extra: Record<string, string | undefined> = {}) => {
    const runnerPort = await freePort()
    const process = await spawnGateway({
      dataDir: tempDir(),
      startTimeoutMs: 30_000,
      env: {
        CLUSTER: "on",
        CLUSTER_HOST: "127.0.0.1",
        CLUSTER_PORT: String(runnerPort),
        DATABASE_URL: databaseUrl,
        CACHE_URL: serverUrl("redis"),
        API_KEY: TEST_KEY,
        ...env,
        ...extra
      }
    })
    const runner = Object.assign(process, { runnerPort })
    runners.push(runner)
    return runner
  }
  for (let i = 0; i < size; i++) await addRunner()
  return { databaseUrl, runners, addRunner }
}
