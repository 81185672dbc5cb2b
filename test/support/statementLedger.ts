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
      }
      return original.apply(this, args)
    }
  }
}

export interface LedgerReading {
  readonly total: number
  readonly bySql: ReadonlyArray<readonly [string, number]>
}

/** Counts every statement run while `during` runs (statements of anything else in the process included). */
export const countStatements = async (during: () => Promise<void>): Promise<LedgerReading> => {
  install()
  counts.clear()
  counting = true
  try {
    await during()
  } finally {
    counting = false
  }
  const bySql = [...counts.entries()].sort((a, b) => b[1] - a[1])
  return { total: bySql.reduce((sum, [, n]) => sum + n, 0), bySql }
}

/** The reading as a table of statements per unit (e.g. per message), most frequent first. */
export const perUnitTable = (title: string, reading: LedgerReading, units: number) =>
  [
    `${title}: ${(reading.total / units).toFixed(1)} statements per unit (${reading.total} for ${units})`,
    ...reading.bySql.map(([sql, n]) => `  ${(n / units).toFixed(2).padStart(6)}  ${sql}`)
  ].join("\n")

/** A read of the database that the ledger does not count (the test watching, not the gateway working). */
export const uncountedGet = <A>(file: string, sql: string, ...params: Array<unknown>): A => {
  install()
  const wasCounting = counting
  counting = false
  const db = new Database(file) as unknown as {
    prepare: (sql: string) => { get: (...params: Array<unknown>) => A }
    close: () => void
  }
  try {
    return db.prepare(sql).get(...params)
  } finally {
    db.close()
    counting = wasCounting
  }
}
