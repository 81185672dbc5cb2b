/**
 * What CLUSTER chooses, checked without a cluster: the settings it needs and refuses, the
 * gateway refusing to start a runner on SQLite, and engine calls as data (what travels to the
 * runner that holds a session's connection), which run only the operations they name.
 */
import { ConfigProvider, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { settingsConfig } from "../src/app/Config.js"
import type { EngineConnection } from "../src/runtime/Engine.js"
import { applyEngineCall, engineCall } from "../src/runtime/EngineCall.js"
import { tempDir } from "./support/gateway.js"
import { useGatewayProcesses } from "./support/process.js"

const read = (env: Record<string, string>) =>
  Effect.runSyncExit(settingsConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))

const failureText = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? String(exit.cause) : "")

describe("CLUSTER settings", () => {
  it("is off unless asked for, and then needs the Store on Postgres", () => {
    const single = read({})
    expect(Exit.isSuccess(single) && single.value.cluster.enabled).toBe(false)

    const onSqlite = read({ CLUSTER: "on" })
    expect(Exit.isFailure(onSqlite)).toBe(true)
    expect(failureText(onSqlite)).toContain("CLUSTER=on needs DATABASE_URL on Postgres")

    const onPostgres = read({
      CLUSTER: "on",
      DATABASE_URL: "postgres://sb@db.internal:5432/switchboard",
      CLUSTER_HOST: "10.0.0.7",
      CLUSTER_PORT: "41000",
      CLUSTER_LISTEN_HOST: "0.0.0.0"
    })
    expect(Exit.isSuccess(onPostgres) && onPostgres.value.cluster).toMatchObject({
      enabled: true,
      host: "10.0.0.7",
      port: 41000,
      listenHost: { _tag: "Some", value: "0.0.0.0" }
    })
  })

  it("refuses a runner port out of range and a CLUSTER value other than on/off", () => {
    const postgres = { DATABASE_URL: "postgresql://sb@localhost/sb" }
    for (const env of [{ CLUSTER: "on", CLUSTER_PORT: "70000" }, { CLUSTER: "on", CLUSTER_PORT: "0" }, { CLUSTER: "yes" }]) {
      expect(Exit.isFailure(read({ ...postgres, ...env })), JSON.stringify(env)).toBe(true)
    }
  })

  const spawn = useGatewayProcesses()

  it("a gateway started with CLUSTER=on on SQLite stops at once with the reason", async () => {
    const started = spawn({ dataDir: tempDir(), env: { CLUSTER: "on" } })
    await expect(started).rejects.toThrow(/CLUSTER=on needs DATABASE_URL on Postgres/)
  })
})

describe("engine calls as data", () => {
  const calls: Array<string> = []
  const operation = (name: string) => (...args: ReadonlyArray<unknown>) => Effect.sync(() => calls.push(`${name}(${args.join(",")})`))
  const connection = {
    markRead: operation("markRead"),
    requestPairingCode: (phone: string) => Effect.succeed(`code-for-${phone}`),
    logout: Effect.sync(() => calls.push("logout")),
    send: operation("send"),
    groups: { get: (groupId: string) => Effect.succeed({ id: groupId }), list: Effect.succeed([{ id: "1@g.us" }]) },
    channels: {},
    labels: {},
    contacts: {}
  } as unknown as EngineConnection

  it("runs the operation it names with its arguments, in a namespace or on the connection", async () => {
    expect(await Effect.runPromise(applyEngineCall(connection, engineCall("groups.get", "123@g.us")))).toEqual({ id: "123@g.us" })
    expect(await Effect.runPromise(applyEngineCall(connection, engineCall("groups.list")))).toEqual([{ id: "1@g.us" }])
    expect(await Effect.runPromise(applyEngineCall(connection, engineCall("requestPairingCode", "15551234567")))).toBe("code-for-15551234567")
    await Effect.runPromise(applyEngineCall(connection, engineCall("markRead", "1@c.us", ["a", "b"])))
    expect(calls).toEqual(["markRead(1@c.us,a,b)"])
  })

  it("refuses any other name: what a call may do is the list of operations, not whatever the connection has", async () => {
    for (const operation of ["logout", "send", "groups", "groups.get.call", "constructor", "groups.constructor", "__proto__.x", "toString", "events"]) {
      const refused = await Effect.runPromise(Effect.flip(applyEngineCall(connection, { operation, args: [] })))
      expect(refused, operation).toMatchObject({ code: "UNKNOWN_OPERATION", refusal: "not_supported" })
    }
    expect(calls).toEqual(["markRead(1@c.us,a,b)"])
  })
})
