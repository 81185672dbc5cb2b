import { Duration, Effect, Exit, Scope } from "effect"
import { BaileysEngineLive } from "../../src/runtime/engines/baileys/BaileysEngine.js"
import { startGatewayWith, type TestGateway } from "./gateway.js"
import type { WaPeer } from "./wa-peer/index.js"

/**
 * A gateway with ENGINE=baileys against the loopback peer, on one data directory (its SQLite
 * database), that a test stops and starts again: each start builds every layer anew, as a new
 * process would, and finds only what the database kept. Reconnects are quick (1–2 s), for tests.
 */
export interface RestartableBaileysGateway {
  /** Starts it (again) on the data directory. */
  readonly start: () => Promise<Omit<TestGateway, "network">>
  /** Stops it, as a shutdown does; nothing if it is not running. */
  readonly stop: () => Promise<void>
}

export const baileysGatewayOn = (peer: WaPeer, dataDir: string): RestartableBaileysGateway => {
  let scope: Scope.CloseableScope | undefined
  return {
    start: async () => {
      scope = await Effect.runPromise(Scope.make())
      // The peer's media server has a self-signed certificate: trusted for media, like a CA.
      const engine = BaileysEngineLive({ waWebSocketUrl: peer.url, mediaCa: peer.mediaCa })
      return Effect.runPromise(Scope.extend(
        startGatewayWith(engine, {
          dataDir,
          databaseUrl: `sqlite:${dataDir}/switchboard.db`,
          engine: "baileys",
          reconnect: {
            initialDelay: Duration.seconds(1),
            maxDelay: Duration.seconds(2),
            maxAttempts: 5,
            healthyAfter: Duration.seconds(30)
          }
        }),
        scope
      ))
    },
    stop: async () => {
      if (scope) await Effect.runPromise(Scope.close(scope, Exit.void))
      scope = undefined
    }
  }
}
