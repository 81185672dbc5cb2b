import { Effect, Layer } from "effect"

/**
 * libsignal (under Baileys) logs every Signal session it opens, closes or migrates with
 * `console.info`/`console.warn`, passing the whole session object: private keys, root and
 * chain keys. Those lines must never reach an operator's logs. While a Baileys engine is
 * alive they are dropped; every other console line passes untouched.
 */
export const SIGNAL_CHATTER =
  /^(Opening session|Closing session|Removing old closed session|Session already (open|closed)|Closing open session|Closing stale open session|Decrypted message with closed session|Migrating session)/

const methods = ["info", "warn", "log", "debug"] as const
type Method = (typeof methods)[number]

// The console is one per process, so the filter is too: installed by the first engine layer
// and removed by the last (tests and embedders may build several).
let holders = 0
let originals: Partial<Record<Method, (...args: Array<unknown>) => void>> = {}

const install = Effect.sync(() => {
  if (holders++ > 0) return
  for (const method of methods) {
    const original = console[method]
    originals[method] = original
    console[method] = (...args: Array<unknown>) => {
      if (typeof args[0] === "string" && SIGNAL_CHATTER.test(args[0])) return
      original.apply(console, args)
    }
  }
})

const uninstall = Effect.sync(() => {
  if (--holders > 0) return
  for (const method of methods) {
    const original = originals[method]
    if (original) console[method] = original
  }
  originals = {}
})

export const SilenceSignalChatter = Layer.scopedDiscard(Effect.acquireRelease(install, () => uninstall))
