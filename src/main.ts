#!/usr/bin/env node
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Logger } from "effect"
import { engineFromSettings, SwitchboardServer } from "./layers/App.js"
import { settingsConfig } from "./layers/Config.js"

const program = Effect.gen(function*() {
  const settings = yield* settingsConfig
  const logger = settings.logFormat === "json" ? Logger.json : Logger.pretty
  return yield* Layer.launch(SwitchboardServer(settings, engineFromSettings(settings))).pipe(
    Effect.provide(logger),
    Logger.withMinimumLogLevel(settings.logLevel)
  )
})

NodeRuntime.runMain(program)
