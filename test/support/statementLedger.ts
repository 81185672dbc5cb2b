import { createRequire } from "node:module"

/**
 * Counts the SQL statements SQLite runs in this process, by their text: better-sqlite3's
 * Statement `run`/`all`/`get`/`iterate` are wrapped once, on the prototype, so a statement
 * counts whether it was prepared before or after. The driver is the one @effect/sql-sqlite-node
 * loads (node_modules are not bundled by vitest, so it is the same module instance).
 */
const require = createRequire(import.meta.url)
const Database = require(require.resolve("better-sqlite3", {
  paths: [require.resolve("@effect/sql-sqlite-node/package.json")]
})) as new(file: string) => { prepare: (sql: string) => object; close: () => void }

const counts = new Map<string, number>()
/** Each statement counted, by its whole text (for its query plan). */
const sources = new Set<string>()
let counting = false

const install = () => {
  const probe = new Database(":memory:")
  const statementPrototype = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, unknown>
  probe.close()
  if (statementPrototype.__ledgered === true) return
  statementPrototype.__ledgered = true
  for (const method of ["run", "all", "get", "iterate"]) {
    const original = statementPrototype[method] as (...args: Array<unknown>) => unknown
    statementPrototype[method] = function(this: { source: string }, ...args: Array<unknown>) {
      if (counting) {
        const key = this.source.replace(/\s+/g, " ").trim().slice(0, 110)
        counts.set(key, (counts.get(key) ?? 0) + 1)
        sources.add(this.source)
      }
      return original.apply(this, args)
    }
  }
}

export interface LedgerReading {
  readonly total: number
  readonly bySql: ReadonlyArray<readonly [string, number]>
  /** The distinct statements, each whole. */
  readonly statements: ReadonlyArray<string>
}

/** Counts every statement run while `during` runs (statements of anything else in the process included). */
export const countStatements = async (during: () => Promise<void>): Promise<LedgerReading> => {
  install()
  counts.clear()
  sources.clear()
  counting = true
  try {
    await during()
  } finally {
    counting = false
  }
  const bySql = [...counts.entries()].sort((a, b) => b[1] - a[1])
  return { total: bySql.reduce((sum, [, n]) => sum + n, 0), bySql, statements: [...sources] }
}

/** The reading as a table of statements per unit (e.g. per message), most frequent first. */
export const perUnitTable = (title: string, reading: LedgerReading, units: number) =>
  [
    `${title}: ${(reading.total / units).toFixed(1)} statements per unit (${reading.total} for ${units})`,
    ...reading.bySql.map(([sql, n]) => `  ${(n / units).toFixed(2).padStart(6)}  ${sql}`)
  ].join("\n")

interface UncountedConnection {
  readonly prepare: (sql: string) => {
    readonly get: (...params: Array<unknown>) => unknown
    readonly all: (...params: Array<unknown>) => Array<unknown>
  }
}

/** A connection of its own to the file, whose statements the ledger does not count, for `use`. */
const withUncountedConnection = <A>(file: string, use: (db: UncountedConnection) => A): A => {
  install()
  const wasCounting = counting
  counting = false
  const db = new Database(file) as unknown as UncountedConnection & { close: () => void }
  try {
    return use(db)
  } finally {
    db.close()
    counting = wasCounting
  }
}

/** A read of the database that the ledger does not count (the test watching, not the gateway working). */
export const uncountedGet = <A>(file: string, sql: string, ...params: Array<unknown>): A =>
  withUncountedConnection(file, (db) => db.prepare(sql).get(...params) as A)

/** The `?` parameters of a statement, not counting a `?` inside a quoted literal or name. */
const positionalParameters = (sql: string) => (sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, "").match(/\?/g) ?? []).length

/**
 * How SQLite would run each statement on this database file (`EXPLAIN QUERY PLAN`, its steps
 * joined by " | "), with every parameter bound to NULL. The gateway never runs ANALYZE, so with no
 * statistics to weigh them the plan follows from the indexes and the statement's shape alone.
 */
export const queryPlans = (file: string, statements: ReadonlyArray<string>): ReadonlyArray<{ readonly sql: string; readonly plan: string }> =>
  withUncountedConnection(file, (db) =>
    statements.map((sql) => {
      const steps = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array(positionalParameters(sql)).fill(null)) as Array<{ detail: string }>
      return { sql, plan: steps.map((step) => step.detail).join(" | ") }
    }))
