import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

/**
 * The house's one-way arrows, read from the imports of `src/`: which folders each folder may
 * import, and that the folders' import graph has no cycle. A new arrow is a decision: add it
 * here and to ARCHITECTURE.md, or put the code where the arrows already allow it.
 */
const allowed: Record<string, ReadonlyArray<string>> = {
  // The composition root: `src/main.ts`, `src/index.ts`, `src/app/`, `src/entry/` (the package's
  // entry points) and the CLI it launches.
  app: ["cli", "http", "services", "runtime", "layers", "domain"],
  cli: ["layers", "runtime", "domain"],
  http: ["services", "runtime", "domain"],
  services: ["runtime", "domain"],
  runtime: ["domain"],
  // Implementations of the runtime's ports, and nothing else of it.
  layers: ["runtime", "domain"],
  domain: []
}

/** What of the runtime `src/layers` may import: the ports it implements. */
const portsOfTheRuntime = [/^runtime\/ports\//, /^runtime\/Engine\.ts$/, /^runtime\/engines\/sandbox\/Ledger\.ts$/]

const srcDir = path.resolve(import.meta.dirname, "../src")

interface ImportEdge {
  readonly from: string
  readonly to: string
}

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return /\.tsx?$/.test(entry.name) ? [full] : []
  })

const importPattern = /(?:^|[\s;])(?:import|export)\s[^"']*?from\s*["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)|^import\s*["'](\.[^"']+)["']/gm

/** Every relative import in `src/`, as paths relative to `src/` (`.js` specifiers name `.ts` files). */
const importEdges = (): Array<ImportEdge> =>
  sourceFiles(srcDir).flatMap((file) =>
    Array.from(fs.readFileSync(file, "utf8").matchAll(importPattern), (match) => {
      const specifier = (match[1] ?? match[2] ?? match[3])!
      const target = path.resolve(path.dirname(file), specifier).replace(/\.js$/, ".ts")
      return { from: path.relative(srcDir, file), to: path.relative(srcDir, target) }
    }))

/** The folders of the composition root besides `src/app/`: the package's entry points re-export from any folder. */
const compositionRoot = new Set(["entry"])

/** The folder a file belongs to: its first folder under `src/`; the root's files are the composition root. */
const folderOf = (file: string) => {
  const folder = file.includes(path.sep) ? file.split(path.sep)[0]! : "app"
  return compositionRoot.has(folder) ? "app" : folder
}

/** A cycle in a directed graph, as the list of its nodes, or undefined when there is none. */
export const findCycle = (graph: ReadonlyMap<string, ReadonlySet<string>>): Array<string> | undefined => {
  const state = new Map<string, "open" | "done">()
  const trail: Array<string> = []
  const visit = (node: string): Array<string> | undefined => {
    if (state.get(node) === "done") return undefined
    if (state.get(node) === "open") return [...trail.slice(trail.indexOf(node)), node]
    state.set(node, "open")
    trail.push(node)
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next)
      if (cycle !== undefined) return cycle
    }
    trail.pop()
    state.set(node, "done")
    return undefined
  }
  for (const node of graph.keys()) {
    const cycle = visit(node)
    if (cycle !== undefined) return cycle
  }
  return undefined
}

const folderGraph = (edges: ReadonlyArray<ImportEdge>) => {
  const graph = new Map<string, Set<string>>()
  for (const { from, to } of edges) {
    const [a, b] = [folderOf(from), folderOf(to)]
    if (a === b) continue
    if (!graph.has(a)) graph.set(a, new Set())
    graph.get(a)!.add(b)
  }
  return graph
}

describe("the folders' import arrows", () => {
  const edges = importEdges()

  it("reads the imports it judges (a sanity check of the reader itself)", () => {
    expect(edges.length).toBeGreaterThan(500)
    expect(edges).toContainEqual({ from: path.join("http", "Api.ts"), to: path.join("domain", "Errors.ts") })
  })

  it("finds a cycle where there is one, and none where there is none", () => {
    const graph = (pairs: ReadonlyArray<readonly [string, string]>) => {
      const map = new Map<string, Set<string>>()
      for (const [a, b] of pairs) map.set(a, (map.get(a) ?? new Set()).add(b))
      return map
    }
    expect(findCycle(graph([["http", "services"], ["services", "runtime"], ["runtime", "domain"]]))).toBeUndefined()
    expect(findCycle(graph([["http", "services"], ["services", "runtime"], ["runtime", "services"]]))).toEqual(["services", "runtime", "services"])
  })

  it("have no cycle between folders", () => {
    expect(findCycle(folderGraph(edges))).toBeUndefined()
  })

  it("run only the ways the architecture allows", () => {
    const wrong = edges
      .filter(({ from, to }) => {
        const [a, b] = [folderOf(from), folderOf(to)]
        return a !== b && !(allowed[a] ?? []).includes(b)
      })
      .map(({ from, to }) => `${from} → ${to}`)
    expect(wrong).toEqual([])
  })

  it("let the layers reach into the runtime only for the ports they implement", () => {
    const wrong = edges
      .filter(({ from, to }) => folderOf(from) === "layers" && folderOf(to) === "runtime")
      .filter(({ to }) => !portsOfTheRuntime.some((port) => port.test(to.split(path.sep).join("/"))))
      .map(({ from, to }) => `${from} → ${to}`)
    expect(wrong).toEqual([])
  })

  it("keep the domain free of everything but effect and Node", () => {
    const packages = sourceFiles(path.join(srcDir, "domain")).flatMap((file) =>
      Array.from(fs.readFileSync(file, "utf8").matchAll(/from\s*["']([^."'][^"']*)["']/g), (match) => match[1]!))
    expect(packages.filter((name) => !(name === "effect" || name.startsWith("effect/") || name.startsWith("node:")))).toEqual([])
  })
})
