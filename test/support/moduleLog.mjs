// Preloaded into a gateway child (`NODE_OPTIONS=--import <this file>`): appends every ES module
// the process loads (its file URL, node: builtins aside) to the file named by MODULE_LOG, so
// that a test can see what a gateway loads to start. Registers itself as the resolve hook.
import * as fs from "node:fs"
import { isMainThread } from "node:worker_threads"
import { register } from "node:module"

if (isMainThread && process.env["MODULE_LOG"] !== undefined) register(import.meta.url)

export const resolve = async (specifier, context, next) => {
  const resolved = await next(specifier, context)
  if (!resolved.url.startsWith("node:")) fs.appendFileSync(process.env["MODULE_LOG"], resolved.url + "\n")
  return resolved
}
