#!/usr/bin/env node
// The build's last step for the server: bundles the compiled gateway (dist/main.js) with the
// Effect packages into dist/bundle/, which `npm start` runs.
//
// Why: loading the gateway from dist/ means Node resolving, reading and compiling ~1,000 ES
// modules (601 of them effect's: its index loads every module), about half of the CPU a
// gateway spends before it listens. One bundle, tree-shaken, halves that (see bench/README.md,
// "Start-up"). Only the Effect packages go in: every other package stays an import of its own
// (native addons, Baileys, the AWS SDK…, each loaded from node_modules as before), and the
// modules the gateway imports only when it needs them (the Baileys engine, Postgres, Redis,
// S3, the cluster) stay separate chunks, loaded then.
//
// dist/bundle/ sits at the same depth as dist/http/ and the other folders, so the paths the
// code finds relative to its own module (the dashboard's files, package.json) stay right.

import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const bundled = /^(effect|@effect\/[^/]+)(\/|$)/

// Chunks are named by their content's hash: the last build's would otherwise pile up.
fs.rmSync(path.join(root, "dist/bundle"), { recursive: true, force: true })

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: ["dist/main.js"],
  outdir: "dist/bundle",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  legalComments: "none",
  logLevel: "warning",
  // A module read through an index that no longer re-exports it is undefined: fail instead.
  logOverride: { "import-is-undefined": "error" },
  metafile: true,
  plugins: [{
    name: "only-effect-packages",
    setup(build) {
      // A bare import of any other package stays an import (node: builtins included).
      build.onResolve({ filter: /^[^./]/ }, (args) => bundled.test(args.path) ? undefined : { path: args.path, external: true })
    }
  }, {
    // Code for what only some gateways ever do stays out of the chunks every start parses:
    // the Swagger UI page's 2 MB of script (a string in @effect/platform's HttpApiSwagger), for
    // the first request of /api/docs; the cluster's sockets (@effect/platform-node's
    // NodeClusterSocket, and with it @effect/cluster, ~180 KB), for CLUSTER=on.
    // Both are imported only by modules loaded on demand (src/http/swaggerPage.ts,
    // src/app/ClusterTopology.ts). But esbuild puts a module in the chunks of every entry that can
    // reach it, used or not, and every start reached these through their package's index,
    // which re-exports them. Those modules import them by their own paths, and the indexes
    // bundled here drop the re-exports (the build fails if an index no longer has one).
    name: "on-demand-modules-out-of-indexes",
    setup(build) {
      const onDemand = [
        { index: /[\\/]@effect[\\/]platform[\\/]dist[\\/]esm[\\/]index\.js$/, module: "HttpApiSwagger" },
        { index: /[\\/]@effect[\\/]platform-node[\\/]dist[\\/]esm[\\/]index\.js$/, module: "NodeClusterSocket" }
      ]
      for (const { index, module } of onDemand) {
        build.onLoad({ filter: index }, async (args) => {
          const source = await fs.promises.readFile(args.path, "utf8")
          const reexport = `export * as ${module} from "./${module}.js";\n`
          if (!source.includes(reexport)) throw new Error(`${args.path} no longer re-exports ${module} as expected (scripts/bundle.mjs)`)
          return { contents: source.replace(reexport, ""), loader: "js", resolveDir: path.dirname(args.path) }
        })
      }
    }
  }]
})

// What only some gateways load must stay out of what every start loads (the chunks main.js
// imports statically, and theirs): a module re-exported by an index the start reaches lands
// there otherwise (see on-demand-modules-out-of-indexes). Checked here, at build time. Of
// @effect/rpc, every start needs the definitions of the engine's operations (Rpc, RpcGroup and
// what they use: src/runtime/EngineCall.ts); its servers, clients and serializers are the cluster's.
const onDemandOnly = new RegExp([
  String.raw`node_modules/@effect/(cluster|workflow)/`,
  String.raw`node_modules/@effect/rpc/dist/esm/(?!(Rpc|RpcGroup|RpcSchema|RpcMiddleware)\.js$)`,
  String.raw`node_modules/@effect/platform/dist/esm/(internal/httpApiSwagger|HttpApiSwagger)\.js$`
].join("|"))
const outputs = result.metafile.outputs
const startChunks = new Set()
const visit = (file) => {
  if (startChunks.has(file)) return
  startChunks.add(file)
  for (const imported of outputs[file].imports) if (imported.kind === "import-statement" && outputs[imported.path] !== undefined) visit(imported.path)
}
visit("dist/bundle/main.js")
const leaked = [...startChunks].flatMap((file) => Object.keys(outputs[file].inputs).filter((input) => onDemandOnly.test(input)))
if (leaked.length > 0) {
  throw new Error(`modules meant to load on demand are in what every start loads:\n  ${leaked.join("\n  ")}`)
}
