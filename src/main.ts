#!/usr/bin/env node
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Logger } from "effect"
import { parseMigrateArguments, runMigrate } from "./cli/migrateCommand.js"
import { engineFromSettings, SwitchboardServer } from "./app/App.js"
import { settingsConfig } from "./app/Config.js"

const serve = Effect.gen(function*() {
  const settings = yield* settingsConfig
  const logger = settings.logFormat === "json" ? Logger.json : Logger.pretty
  return yield* Layer.launch(SwitchboardServer(settings, engineFromSettings(settings))).pipe(
    Effect.provide(logger),
    Logger.withMinimumLogLevel(settings.logLevel)
  )
})

/** `switchboard migrate …` copies a Store to another backend; anything else starts the gateway. */
const migrateCommand = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const args = parseMigrateArguments(argv)
    if (typeof args === "string") {
      yield* Console.error(args)
      return yield* Effect.sync(() => process.exit(2))
    }
    yield* runMigrate(yield* settingsConfig, args)
  })

const [command, ...rest] = process.argv.slice(2)
// The gateway logs through the logger LOG_FORMAT chose, instead of (not beside) runMain's pretty one.
NodeRuntime.runMain(command === "migrate" ? migrateCommand(rest) : serve, { disablePrettyLogger: command !== "migrate" })
