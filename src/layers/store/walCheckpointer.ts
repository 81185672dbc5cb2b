import { Duration, Effect, Runtime, Schedule } from "effect"
import { statSync } from "node:fs"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"

/**
 * SQLite's checkpoints (copying the WAL's pages back into the database file, with an fsync of
 * each) on a thread of their own. better-sqlite3 is synchronous: a checkpoint run by the
 * gateway's connection, as SQLite does after the commit that takes the WAL past 1,000 pages,
 * stops the event loop for its copy and its fsyncs, ~1 ms in every dozen group commits under a
 * load of sends, ~8 % of the requests the gateway could have answered meanwhile (bench/README.md,
 * "Ninth round"). A second connection in a worker thread checkpoints instead (PASSIVE: it never
 * waits for, nor holds up, the gateway's reads and writes); a commit stays durable as before,
 * in the WAL, before its caller is answered.
 *
 * The thread starts once the WAL first holds more than `START_AT_WAL_BYTES` (a gateway that
 * writes little never starts one). The gateway's own connection keeps checkpointing past
 * `OWN_CHECKPOINT_PAGES` pages, a bound on the WAL should the thread fall behind or fail.
 */

/** The WAL size at which the thread starts. */
const START_AT_WAL_BYTES = 1024 * 1024
/** How often the thread checkpoints, and how often the WAL's size is looked at until it starts. */
const CHECKPOINT_EVERY = Duration.millis(250)
const LOOK_EVERY = Duration.seconds(1)
/** How long a closing store waits for the thread's last checkpoint before ending it. */
const CLOSE_WITHIN = Duration.seconds(2)

/** The WAL pages past which the gateway's connection checkpoints itself (SQLite's default is 1,000). */
export const OWN_CHECKPOINT_PAGES = 10_000

/**
 * The thread: plain CommonJS, evaluated as the worker's script (no file of its own, so that it
 * runs alike from dist/, the bundle and an embedding app's node_modules).
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.driver)
const db = new Database(workerData.filename, { fileMustExist: true })
const checkpoint = () => { try { db.pragma("wal_checkpoint(PASSIVE)") } catch {} }
const timer = setInterval(checkpoint, workerData.everyMillis)
parentPort.once("message", () => { clearInterval(timer); checkpoint(); db.close(); parentPort.close() })
`

const walBytes = (filename: string): number => {
  try {
    return statSync(`${filename}-wal`).size
  } catch {
    return 0
  }
}

const stop = (worker: Worker): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    worker.once("exit", () => resume(Effect.void))
    worker.postMessage("close")
  }).pipe(
    Effect.timeoutTo({ duration: CLOSE_WITHIN, onSuccess: () => Effect.void, onTimeout: () => Effect.promise(() => worker.terminate()) }),
    Effect.flatten,
    Effect.asVoid
  )

const start = (filename: string) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const worker = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Worker(THREAD_SOURCE, {
          eval: true,
          workerData: {
            driver: createRequire(import.meta.url).resolve("better-sqlite3"),
            filename,
            everyMillis: Duration.toMillis(CHECKPOINT_EVERY)
          }
        })
      ),
      stop
    )
    // The thread failing leaves the gateway's own checkpoints (past OWN_CHECKPOINT_PAGES).
    worker.on("error", (error) =>
      Runtime.runFork(runtime)(Effect.logWarning("SQLite checkpoint thread failed; the gateway's connection checkpoints instead", error.message))
    )
    worker.unref()
  })

/**
 * Runs for the store's scope: looks at the WAL's size each second until it passes
 * `START_AT_WAL_BYTES`, then starts the thread, which is ended (after a last checkpoint) when
 * the scope closes, before the store's own closing checkpoint.
 */
export const checkpointOnAThread = (filename: string) =>
  Effect.forkScoped(
    // Interruptible even when the store is opened in an uninterruptible region, which a forked
    // fiber would otherwise inherit, and its scope would wait forever for it to end.
    Effect.interruptible(Effect.repeat(
      Effect.suspend(() => walBytes(filename) > START_AT_WAL_BYTES ? Effect.as(start(filename), true) : Effect.succeed(false)),
      { schedule: Schedule.spaced(LOOK_EVERY), until: (started) => started }
    ))
  )
