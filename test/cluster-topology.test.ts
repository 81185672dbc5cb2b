/**
 * What CLUSTER chooses, checked without a cluster of processes: the settings it needs and
 * refuses, the gateway refusing to start a runner on SQLite, and engine calls as they travel
 * to the runner that holds a session's connection (on an in-memory cluster): typed Rpcs that
 * answer as the local call does, and nothing else.
 */
import { Entity, Sharding, TestRunner } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Duration, Effect, Either, Exit, Fiber, Layer, Schema, TestClock } from "effect"
import { settingsConfig } from "../src/app/Config.js"
import { SessionRepo } from "../src/runtime/ports/store/SessionRepo.js"
import { ClusterSupervisorLive } from "../src/runtime/cluster/ClusterSupervisor.js"
import { LocalSupervisor, SessionEntity, SessionEntityLive } from "../src/runtime/cluster/SessionEntity.js"
import { type EngineCall, engineCall, type EngineOperation } from "../src/runtime/EngineCall.js"
import { SessionSupervisor } from "../src/runtime/SessionSupervisor.js"
import { type Core, startCore } from "./support/core.js"
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

/**
 * The two ends of an engine call in a cluster, in one process: the cluster's supervisor (what
 * a runner's API uses) sending to the session's entity, hosted on an in-memory cluster whose
 * runner holds the session's actor on a real sandbox connection. Without `hostingSessions`,
 * no runner hosts Session entities, as when the one that did has died and its shards have
 * not moved yet.
 */
const withClusterOver = (core: Core, { hostingSessions = true } = {}) =>
  Effect.gen(function*() {
    const host = Layer.mergeAll(ClusterSupervisorLive, hostingSessions ? SessionEntityLive : Layer.empty).pipe(
      Layer.provide(Layer.succeed(LocalSupervisor, core.supervisor)),
      Layer.provide(Layer.succeed(SessionRepo, Context.get(core.context, SessionRepo))),
      Layer.provideMerge(TestRunner.layer)
    )
    const context = yield* Layer.build(host)
    return { supervisor: Context.get(context, SessionSupervisor), sharding: Context.get(context, Sharding.Sharding) }
  })

/**
 * An entity claiming the Session type, with Rpcs the real one does not have: the old untyped
 * `Call`, and the engine connection's members that are not engine operations.
 */
const forged = ["Call", "logout", "send", "downloadMedia", "events"]
const ForgedSession = Entity.make("Session", forged.map((name) => Rpc.make(name, { success: Schema.Unknown, error: Schema.Unknown })))

const refusal = <Op extends EngineOperation>(call: EngineCall<Op>, tag: string, code: string) => ({ call, tag, code })

describe("engine calls between runners", () => {
  it.live("answer the same through the session's entity as on its own runner: values, and refusals with their status and code", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ sandboxPairDelay: Duration.millis(10) })
      const cluster = yield* withClusterOver(core)
      const session = yield* core.sessions.create({ name: "remote", autoStart: true })
      yield* core.awaitStatus(session.id, "ready")

      const both = <Op extends EngineOperation>(call: EngineCall<Op>) =>
        Effect.all([core.supervisor.useConnection(session.id, call), cluster.supervisor.useConnection(session.id, call)].map(Effect.either))

      const [local, remote] = yield* both(engineCall("ContactsCheck", { phones: ["15550001111", "4930999999"] }))
      expect(remote).toEqual(local)
      expect(Either.getOrThrow(remote).map((check) => check.exists)).toEqual([true, false])
      const [created] = yield* both(engineCall("GroupsCreate", { subject: "over the wire", participants: ["15550001111@c.us"] }))
      const groupId = Either.getOrThrow(created).id
      const [localGroup, remoteGroup] = yield* both(engineCall("GroupsGet", { groupId }))
      expect(Either.getOrThrow(remoteGroup)).toEqual(Either.getOrThrow(localGroup))
      expect(Either.getOrThrow(remoteGroup).subject).toBe("over the wire")

      for (
        const { call, code, tag } of [
          refusal(engineCall("GroupsGet", { groupId: "999999999999@g.us" }), "NotFound", "GROUP_NOT_FOUND"),
          refusal(engineCall("LabelsCreate", { name: "vip", color: 1 }), "Conflict", "NOT_A_BUSINESS_ACCOUNT"),
          // Linked: no QR, so no pairing code.
          refusal(engineCall("RequestPairingCode", { phoneNumber: "15551234567" }), "Conflict", "SESSION_NOT_READY")
        ]
      ) {
        const [localRefusal, remoteRefusal] = yield* both(call)
        expect(remoteRefusal, code).toEqual(localRefusal)
        expect(Either.getOrThrow(Either.flip(remoteRefusal)), code).toMatchObject({ _tag: tag, code })
      }
    }).pipe(Effect.scoped))

  it.scoped("answer 409 SESSION_NOT_READY when the session's runner cannot be reached", () =>
    Effect.gen(function*() {
      const core = yield* startCore()
      const cluster = yield* withClusterOver(core, { hostingSessions: false })
      const session = yield* core.sessions.create({ name: "unhosted", autoStart: false })
      const call = yield* cluster.supervisor.useConnection(session.id, engineCall("GroupsList", {})).pipe(Effect.flip, Effect.fork)
      // Longer than the call's own timeout, which outlasts the engine's 30 s.
      yield* TestClock.adjust("40 seconds")
      expect(yield* Fiber.join(call)).toMatchObject({ _tag: "Conflict", code: "SESSION_NOT_READY" })
    }))

  it.live("refuses a message naming anything but the entity's Rpcs, and runs nothing on the connection", () =>
    Effect.gen(function*() {
      // The typed form cannot even name them (checked by the type check of this file).
      // @ts-expect-error the connection's logout is the session's lifecycle, not an engine call
      engineCall("logout", {})
      // @ts-expect-error a send goes through the actor's outbound lane
      engineCall("send", {})
      // @ts-expect-error nor can a name found on every object
      engineCall("constructor", {})

      const core = yield* startCore({ sandboxPairDelay: Duration.millis(10) })
      const cluster = yield* withClusterOver(core)
      const session = yield* core.sessions.create({ name: "target", autoStart: true })
      yield* core.awaitStatus(session.id, "ready")
      // What a runner answers is its protocol, a map of Rpc tags: no prototype lookups.
      const answered = [...SessionEntity.protocol.requests.keys()]
      for (const name of [...forged, "constructor", "__proto__", "toString", "groups.get.call"]) {
        expect(SessionEntity.protocol.requests.has(name), name).toBe(false)
      }
      expect(answered).toEqual(expect.arrayContaining(["Start", "Stop", "Send", "GroupsGet", "MarkRead", "RequestPairingCode"]))

      const client = (yield* cluster.sharding.makeClient(ForgedSession))(session.id)
      for (const name of forged) {
        const exit = yield* client[name]!(undefined).pipe(Effect.timeout("5 seconds"), Effect.exit)
        expect(Exit.isFailure(exit), name).toBe(true)
      }
      // Still linked (no logout ran), nothing was sent, and the session still answers its calls.
      expect((yield* core.sessions.get(session.id)).status).toBe("ready")
      expect(yield* core.sentCommands).toEqual([])
      const [check] = yield* cluster.supervisor.useConnection(session.id, engineCall("ContactsCheck", { phones: ["15550001111"] }))
      expect(check?.exists).toBe(true)
    }).pipe(Effect.scoped))
})
