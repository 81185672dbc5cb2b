/** Printing the benchmarks' figures: numbers, ratios, aligned tables, bars, settings. */

import * as fs from "node:fs"

export const log = (line: string) => console.log(`[bench] ${line}`)

/** A number with thousands separators; "n/a" for NaN/undefined. */
export const fmt = (n: number | undefined, digits = 0) =>
  n === undefined || !Number.isFinite(n)
    ? "n/a"
    : n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** a/b as "0.0123×" (three significant digits). */
export const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? `${Number((a / b).toPrecision(3))}×` : "n/a")

export const mb = (kb: number | undefined) => (kb === undefined ? "n/a" : `${(kb / 1024).toFixed(1)} MB`)

/** Rows of cells, the first column left-aligned and the others right-aligned. */
export const table = (rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)))
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("   ")).join("\n")
}

/** "PASS  what (figure; bar)" or FAIL; a bar that could not be measured fails. */
export const bar = (what: string, passed: boolean | undefined, detail: string) =>
  `${passed === true ? "PASS" : "FAIL"}  ${what}: ${detail}${passed === undefined ? " (not measured)" : ""}`

export const numberFromEnv = (name: string, fallback: number) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`)
  return n
}

export type StoreKind = "sqlite" | "postgres"

/** BENCH_STORE: where the gateway and the INSERT reference store their rows. */
export const storeFromEnv = (): StoreKind => {
  const store = process.env["BENCH_STORE"] || "sqlite"
  if (store !== "sqlite" && store !== "postgres") throw new Error(`BENCH_STORE must be "sqlite" or "postgres", got ${JSON.stringify(store)}`)
  return store
}

/** Seconds since `start` (a `performance.now()`). */
export const since = (start: number) => (performance.now() - start) / 1000

/**
 * Runs a benchmark's `main` and ends the process: exit 1 when the run itself is broken (its
 * problems are printed, and the temp dir with the servers' logs is kept), else 0 (the temp dir
 * is removed unless BENCH_KEEP=1). A missed bar is not a broken run.
 */
export const finishBenchmark = async (main: () => Promise<void>, workDir: string, problems: Array<string>): Promise<never> => {
  try {
    await main()
  } catch (error) {
    problems.unshift(error instanceof Error ? error.stack ?? error.message : String(error))
  }
  if (problems.length > 0) console.error(`\nBENCH BROKEN (figures above are not to be trusted):\n${problems.map((p) => `  - ${p}`).join("\n")}`)
  if (process.env["BENCH_KEEP"] === "1" || problems.length > 0) log(`kept ${workDir} (the servers' logs)`)
  else fs.rmSync(workDir, { recursive: true, force: true })
  process.exit(problems.length > 0 ? 1 : 0)
}
