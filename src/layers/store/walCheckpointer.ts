import { Cause, Clock, Deferred, Duration, Effect, Runtime, Schedule } from "effect"
import { statSync } from "node:fs"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"

/**
 * SQLite's checkpoints (copying the WAL's pages back into the database file, with an fsync of
 * each) mostly on a thread of their own. better-sqlite3 is synchronous: a checkpoint run by the
 * gateway's connection, as SQLite does after the commit that takes the WAL past 1,000 pages,
 * stops the event loop for its copy and its fsyncs, ~1 ms in every dozen group commits under a
 * load of sends, 7–16 % of the requests the gateway could have answered meanwhile
 * (bench/README.md, "Ninth round"). A second connection in a worker thread checkpoints instead
 * (PASSIVE: it never waits for, nor holds up, the gateway's reads and writes); a commit stays
 * durable as before, in the WAL, before its caller is answered.
 *
 * The gateway's own connection still checkpoints past `OWN_CHECKPOINT_PAGES` pages: only a
 * writer that finds every frame copied can start the WAL over, and under sustained writes
 * commits land during each of the thread's passes, so that checkpoint, finding nearly all of
 * the WAL copied, is what starts it over (and it bounds the WAL should the thread fail).
 *
 * The thread starts once the WAL first holds more than `START_AT_WAL_BYTES` (nothing
 * checkpoints before: the WAL only grows until then, so any gateway starts it after its first
 * hundred or so messages; a store opened for a moment, as the tests open many, never does).
 */

/** The WAL size at which the thread starts. */
const START_AT_WAL_BYTES = 1024 * 1024
/** How often the thread checkpoints. */
const CHECKPOINT_EVERY = Duration.millis(250)
/** How often the WAL's size is looked at until the thread starts. */
const LOOK_EVERY = Duration.seconds(1)
/** How long a closing store waits for the thread to end before ending it. */
const CLOSE_WITHIN = Duration.seconds(2)

/** The WAL pages past which the gateway's connection checkpoints itself (SQLite's default is 1,000). */
export const OWN_CHECKPOINT_PAGES = 10_000

/**
 * The thread: plain CommonJS, evaluated as the worker's script (no file of its own, so that it
 * runs alike from dist/, the bundle and an embedding app's node_modules). No last checkpoint
 * at close: the store's own closing checkpoint (TRUNCATE) follows.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.driver)
const db = new Database(workerData.filename, { fileMustExist: true })
const timer = setInterval(() => { try { db.pragma("wal_checkpoint(PASSIVE)") } catch {} }, workerData.everyMillis)
parentPort.once("message", () => { clearInterval(timer); db.close(); parentPort.close() })
`

/**
 * The better-sqlite3 the store's client loads, not merely one this module can see: two copies
 * of SQLite in one process would not see each other's locks on the same file.
 */
const driverPath = () => {
  const here = createRequire(import.meta.url)
  return createRequire(here.resolve("@effect/sql-sqlite-node/SqliteClient")).resolve("better-sqlite3")
}

const walBytes = (filename: string): number => {
  try {
    return statSync(`${filename}-wal`).size
  } catch {
    return 0
  }
}

interface Thread {
  readonly worker: Worker
  readonly exited: Deferred.Deferred<void>
}

/**
 * Asks the thread to end and waits for it, at most `CLOSE_WITHIN`, then ends it. Interruptible
 * inside (a finalizer is not), so that the time limit holds; a thread that already ended (it
 * failed) is not waited for.
 */
const stop = ({ exited, worker }: Thread): Effect.Effect<void> =>
  Effect.interruptible(
    Effect.zipRight(
      Effect.sync(() => worker.postMessage("close")),
      Deferred.await(exited)
    ).pipe(Effect.timeoutTo({ duration: CLOSE_WITHIN, onSuccess: () => Effect.void, onTimeout: () => Effect.promise(() => worker.terminate()) }))
  ).pipe(Effect.flatten, Effect.asVoid)

/** Starts the thread for the scope; a failure to start it, or of the thread later, is logged and leaves the gateway's own checkpoints. */
export const startCheckpointThread = (filename: string, driver?: string) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const driverFile = driver ?? (yield* Effect.try(driverPath))
    const exited = yield* Deferred.make<void>()
    yield* Effect.acquireRelease(
      Effect.sync((): Thread => {
        const worker = new Worker(THREAD_SOURCE, {
          eval: true,
          workerData: { driver: driverFile, filename, everyMillis: Duration.toMillis(CHECKPOINT_EVERY) }
        })
        // Before anything else can run: an 'error' with no listener would be thrown in the gateway.
        worker.on("error", (error) =>
          Runtime.runFork(runtime)(Effect.logWarning("SQLite checkpoint thread failed; the gateway's connection checkpoints instead", error.message))
        )
        worker.once("exit", () => Deferred.unsafeDone(exited, Effect.void))
        worker.unref()
        return { worker, exited }
      }),
      stop
    )
  }).pipe(
    // An interruption (the store closing meanwhile) stays one, and is no failure to report.
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause)
        : Effect.logWarning("SQLite checkpoint thread not started; the gateway's connection checkpoints instead", cause))
  )

/**
 * Runs for the store's scope: looks at the WAL's size each second until it passes
 * `START_AT_WAL_BYTES`, then starts the thread, which is ended when the scope closes, before
 * the store's own closing checkpoint.
 */
export const checkpointOnAThread = (filename: string) =>
  Effect.forkScoped(
    // Interruptible even when the store is opened in an uninterruptible region, which a forked
    // fiber would otherwise inherit, and its scope would wait forever for it to end.
    Effect.interruptible(Effect.repeat(
      Effect.suspend(() => walBytes(filename) > START_AT_WAL_BYTES ? Effect.as(startCheckpointThread(filename), true) : Effect.succeed(false)),
      { schedule: Schedule.spaced(LOOK_EVERY), until: (started) => started }
    )).pipe(
      // The file's own time, not the services' Clock: a test (or an embedder) that moves its
      // clock by hours would otherwise run thousands of these looks at once.
      Effect.withClock(Clock.make())
    )
  )
