import { Effect, Option } from "effect"

export type WaVersion = `${number}.${number}.${number}`

/**
 * The WhatsApp Web version in a page: a `2.3000.1029000000` anywhere in it (plain text, or JSON
 * such as `{"currentVersion": "2.3000.1029000000"}`), else the `client_revision` of
 * web.whatsapp.com's service worker (`sw.js`), which is build `n` of `2.3000.n`.
 */
export const waVersionIn = (text: string): Option.Option<WaVersion> => {
  const written = /\b(\d)\.(\d{4})\.(\d{6,})\b/.exec(text)
  if (written !== null) return Option.some(`${Number(written[1])}.${Number(written[2])}.${Number(written[3])}` as const)
  const revision = /client_revision\\?"\s*:\s*(\d{6,})/.exec(text)
  return revision === null ? Option.none() : Option.some(`2.3000.${Number(revision[1])}` as const)
}

/**
 * `WA_VERSION_URL`, read once at start: the version it names, or none when it cannot be
 * fetched (5 s) or names none, logged; the engine then presents the one built into Baileys.
 */
export const fetchWaVersion = (url: string): Effect.Effect<Option.Option<WaVersion>> =>
  Effect.tryPromise(async (signal) => {
    const response = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(5_000)]) })
    if (!response.ok) throw new Error(`answered ${response.status}`)
    return waVersionIn(await response.text())
  }).pipe(
    Effect.tap(Option.match({
      onNone: () => Effect.logWarning("WA_VERSION_URL names no WhatsApp Web version; using the one built into Baileys"),
      onSome: (version) => Effect.logInfo(`WhatsApp Web version ${version}, from WA_VERSION_URL`)
    })),
    Effect.catchAll((error) =>
      Effect.as(Effect.logWarning("WA_VERSION_URL could not be read; using the WhatsApp Web version built into Baileys", String(error.cause ?? error)), Option.none()))
  )
