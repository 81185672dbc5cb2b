import { mediaStoreFromSettings } from "../layers/media/mediaStoreLayers.js"

import { SqlClient } from "@effect/sql"
import { Console, Context, Effect, Layer, Option } from "effect"
import { type Settings } from "../domain/Settings.js"
import { MediaStore } from "../runtime/ports/MediaStore.js"
import { storeLayerFromUrl } from "../layers/store/index.js"
import { mediaKeysOf, migrate } from "./migrate.js"

/**
 * `switchboard migrate --from <DATABASE_URL> --to <DATABASE_URL> [--media-from <MEDIA_URL>
 * --media-to <MEDIA_URL>] [--force]`: both stores are opened (and brought to the current
 * schema), then everything is copied from one to the other and the counts compared.
 */
export interface MigrateArguments {
  readonly from: string
  readonly to: string
  readonly mediaFrom: Option.Option<string>
  readonly mediaTo: Option.Option<string>
  readonly force: boolean
}

export const usage = "usage: switchboard migrate --from <DATABASE_URL> --to <DATABASE_URL> [--media-from <MEDIA_URL> --media-to <MEDIA_URL>] [--force]"

/** The arguments after `migrate`, or why they are not usable. */
export const parseMigrateArguments = (argv: ReadonlyArray<string>): MigrateArguments | string => {
  const values = new Map<string, string>()
  let force = false
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]!
    if (name === "--force") force = true
    else if (["--from", "--to", "--media-from", "--media-to"].includes(name) && argv[i + 1] !== undefined) values.set(name, argv[++i]!)
    else return `unexpected argument ${name}\n${usage}`
  }
  const from = values.get("--from")
  const to = values.get("--to")
  if (from === undefined || to === undefined) return usage
  if (from === to) return "--from and --to name the same database"
  const mediaFrom = Option.fromNullable(values.get("--media-from"))
  const mediaTo = Option.fromNullable(values.get("--media-to"))
  if (Option.isSome(mediaFrom) !== Option.isSome(mediaTo)) return "--media-from and --media-to go together"
  return { from, to, mediaFrom, mediaTo, force }
}

const sqlClientOf = (url: string) => Effect.map(Layer.build(storeLayerFromUrl(url)), (context) => Context.get(context, SqlClient.SqlClient))

const mediaStoreOf = (settings: Settings, url: string) =>
  Effect.map(
    Layer.build(mediaStoreFromSettings({ ...settings, media: { ...settings.media, url: Option.some(url) } })),
    (context) => Context.get(context, MediaStore)
  )

export const runMigrate = (settings: Settings, args: MigrateArguments) =>
  Effect.scoped(Effect.gen(function*() {
    yield* Console.log(`migrating ${redact(args.from)} → ${redact(args.to)}`)
    const from = yield* sqlClientOf(args.from)
    const to = yield* sqlClientOf(args.to)
    const media = Option.isSome(args.mediaFrom) && Option.isSome(args.mediaTo)
      ? { from: yield* mediaStoreOf(settings, args.mediaFrom.value), to: yield* mediaStoreOf(settings, args.mediaTo.value), keys: mediaKeysOf(from) }
      : undefined
    return yield* migrate({ from, to, force: args.force, media })
  }))

/** A database URL with its password hidden, for the progress lines. */
const redact = (url: string) => url.replace(/(\/\/[^:/@]+:)[^@]*@/, "$1***@")
