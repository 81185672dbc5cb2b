import { describe, expect, it } from "@effect/vitest"
import {
  addTransactionCapability,
  BufferJSON,
  Curve,
  initAuthCreds,
  proto,
  type SignalDataSet
} from "@whiskeysockets/baileys"
import { Effect, Option } from "effect"
import type { AuthState } from "../src/runtime/Engine.js"
import { isLinked, makeSignalKeyStore, makeStoreAuthState } from "../src/runtime/engines/baileys/authState.js"
import { makeBaileysLogger } from "../src/runtime/engines/baileys/logger.js"
import { authStoreLayer, realAuth } from "./support/authStore.js"

/** An AuthState that records every call and keeps values in memory (as JSON, like the Store). */
const spyAuth = () => {
  const calls: Array<{ readonly method: string; readonly args: unknown }> = []
  const keys = new Map<string, string>()
  const auth: AuthState = {
    readCreds: Effect.succeed(Option.none()),
    writeCreds: (creds) => Effect.sync(() => void calls.push({ method: "writeCreds", args: creds })),
    getKeys: (type, ids) =>
      Effect.sync(() => {
        calls.push({ method: "getKeys", args: { type, ids } })
        const out: Record<string, unknown> = {}
        for (const id of ids) {
          const text = keys.get(`${type}/${id}`)
          if (text !== undefined) out[id] = JSON.parse(text, BufferJSON.reviver)
        }
        return out
      }),
    setKeys: (changes) =>
      Effect.sync(() => {
        calls.push({ method: "setKeys", args: changes })
        for (const [type, entries] of Object.entries(changes)) {
          for (const [id, value] of Object.entries(entries)) {
            if (value === null) keys.delete(`${type}/${id}`)
            else keys.set(`${type}/${id}`, JSON.stringify(value, BufferJSON.replacer))
          }
        }
      }),
    clear: Effect.sync(() => void calls.push({ method: "clear", args: null }))
  }
  return { auth, calls }
}

/** A batch like the one Baileys writes after decrypting a first message: every Signal key type. */
const signalBatch = (): SignalDataSet => {
  const identity = Curve.generateKeyPair()
  return {
    "pre-key": { "7": Curve.generateKeyPair(), "6": null },
    session: { "15551234567.0": new Uint8Array([1, 2, 3, 255]) },
    "sender-key": { "120363012345678901@g.us::15551234567::0": Buffer.from("sender key record") },
    "sender-key-memory": { "120363012345678901@g.us": { "15551234567:0@s.whatsapp.net": true } },
    "app-state-sync-key": {
      AAAAAQ: proto.Message.AppStateSyncKeyData.fromObject({
        keyData: Buffer.alloc(32, 7),
        fingerprint: { rawId: 5, currentIndex: 1, deviceIndexes: [0, 1] },
        timestamp: 1_700_000_000
      })
    },
    "app-state-sync-version": {
      regular: { version: 3, hash: Buffer.alloc(128, 9), indexValueMap: { abc: { valueMac: new Uint8Array([4, 5]) } } }
    },
    "lid-mapping": { "15551234567": "99887766554433", "99887766554433_reverse": "15551234567" },
    "device-list": { "15551234567": ["0", "2"] },
    tctoken: { "15551234567@s.whatsapp.net": { token: Buffer.from("tc-token"), timestamp: "1700000000" } },
    "identity-key": { "15551234567.0": identity.public }
  }
}

const bytes = (value: unknown) => [...(value as Uint8Array)]

describe("Baileys auth state", () => {
  it.effect("keys.set with a whole Signal batch is ONE setKeys call; null deletes", () =>
    Effect.gen(function*() {
      const { auth, calls } = spyAuth()
      const store = makeSignalKeyStore(auth, yield* Effect.runtime<never>())
      yield* Effect.promise(async () => store.set(signalBatch()))
      const sets = calls.filter((call) => call.method === "setKeys")
      expect(sets).toHaveLength(1)
      const changes = sets[0]!.args as Record<string, Record<string, unknown>>
      expect(Object.keys(changes).sort()).toEqual([
        "app-state-sync-key", "app-state-sync-version", "device-list", "identity-key", "lid-mapping",
        "pre-key", "sender-key", "sender-key-memory", "session", "tctoken"
      ])
      expect(changes["pre-key"]!["6"]).toBeNull()
    }))

  it.effect("Baileys' own transaction wrapper commits through ONE setKeys", () =>
    Effect.gen(function*() {
      const { auth, calls } = spyAuth()
      const runtime = yield* Effect.runtime<never>()
      const keys = addTransactionCapability(makeSignalKeyStore(auth, runtime), makeBaileysLogger(runtime, {}), {
        maxCommitRetries: 1,
        delayBetweenTriesMs: 1
      })
      yield* Effect.promise(() =>
        keys.transaction(async () => {
          await keys.set({ session: { "1.0": Buffer.from("a") } })
          await keys.set({ "pre-key": { "1": null } })
          await keys.set({ "sender-key-memory": { "g@g.us": { "1:0@s.whatsapp.net": true } } })
        }, "15551234567")
      )
      expect(calls.filter((call) => call.method === "setKeys")).toHaveLength(1)
    }))

  it.effect("every key type round-trips through the real Store, Buffers and protobufs revived", () =>
    Effect.gen(function*() {
      const auth = yield* realAuth
      const store = makeSignalKeyStore(auth, yield* Effect.runtime<never>())
      const batch = signalBatch()
      yield* Effect.promise(async () => store.set(batch))
      const get = (type: keyof SignalDataSet, ids: Array<string>) => Effect.promise(async () => store.get(type, ids))

      const preKeys = yield* get("pre-key", ["7", "6", "missing"])
      expect(Object.keys(preKeys)).toEqual(["7"])
      const preKey = preKeys["7"] as { public: Uint8Array; private: Uint8Array }
      expect(Buffer.isBuffer(preKey.public) && Buffer.isBuffer(preKey.private)).toBe(true)
      expect(bytes(preKey.public)).toEqual(bytes(batch["pre-key"]!["7"]!.public))

      expect(bytes((yield* get("session", ["15551234567.0"]))["15551234567.0"])).toEqual([1, 2, 3, 255])
      expect(Buffer.from((yield* get("sender-key", ["120363012345678901@g.us::15551234567::0"]))["120363012345678901@g.us::15551234567::0"] as Uint8Array).toString())
        .toBe("sender key record")
      expect(yield* get("sender-key-memory", ["120363012345678901@g.us"])).toEqual(batch["sender-key-memory"])

      const syncKey = (yield* get("app-state-sync-key", ["AAAAAQ"]))["AAAAAQ"]
      expect(syncKey).toBeInstanceOf(proto.Message.AppStateSyncKeyData)
      const revived = syncKey as proto.Message.AppStateSyncKeyData
      expect(bytes(revived.keyData)).toEqual(bytes(Buffer.alloc(32, 7)))
      expect(revived.fingerprint?.rawId).toBe(5)
      expect(revived.fingerprint?.deviceIndexes).toEqual([0, 1])
      expect(Number(revived.timestamp)).toBe(1_700_000_000)

      const version = (yield* get("app-state-sync-version", ["regular"]))["regular"] as {
        version: number
        hash: Buffer
        indexValueMap: Record<string, { valueMac: Uint8Array }>
      }
      expect(version.version).toBe(3)
      expect(Buffer.isBuffer(version.hash) && version.hash.equals(Buffer.alloc(128, 9))).toBe(true)
      expect(bytes(version.indexValueMap["abc"]!.valueMac)).toEqual([4, 5])

      expect(yield* get("lid-mapping", ["15551234567", "99887766554433_reverse"])).toEqual({
        "15551234567": "99887766554433",
        "99887766554433_reverse": "15551234567"
      })
      expect(yield* get("device-list", ["15551234567"])).toEqual({ "15551234567": ["0", "2"] })
      const tc = (yield* get("tctoken", ["15551234567@s.whatsapp.net"]))["15551234567@s.whatsapp.net"] as { token: Buffer }
      expect(Buffer.isBuffer(tc.token) && tc.token.toString()).toBe("tc-token")
      expect(bytes((yield* get("identity-key", ["15551234567.0"]))["15551234567.0"])).toEqual(bytes(batch["identity-key"]!["15551234567.0"]))

      // A later batch deletes with null.
      yield* Effect.promise(async () => store.set({ "pre-key": { "7": null } }))
      expect(yield* get("pre-key", ["7"])).toEqual({})
    }).pipe(Effect.provide(authStoreLayer())))

  it.effect("creds: fresh ones when none are stored; saveCreds persists the merged whole; a reload gets it back", () =>
    Effect.gen(function*() {
      const auth = yield* realAuth
      const first = yield* makeStoreAuthState(auth)
      expect(first.state.creds.registrationId).toBeGreaterThan(0)
      expect(isLinked(first.state.creds)).toBe(false)
      expect(Option.isNone(yield* auth.readCreds)).toBe(true)

      // What pair-success brings: `me`, and `account`, a protobuf instance with bytes fields.
      const account = proto.ADVSignedDeviceIdentity.create({
        details: Buffer.from("device details"),
        accountSignatureKey: Buffer.alloc(32, 1),
        accountSignature: Buffer.alloc(64, 2),
        deviceSignature: Buffer.alloc(64, 3)
      })
      const encodedAccount = proto.ADVSignedDeviceIdentity.encode(account).finish()
      yield* first.saveCreds({
        me: { id: "15551234567:3@s.whatsapp.net", lid: "99887766554433:3@lid", name: "Alice" },
        account,
        signalIdentities: [{ identifier: { name: "99887766554433:3@lid", deviceId: 0 }, identifierKey: Buffer.alloc(33, 5) }]
      })
      expect(first.state.creds.me?.name).toBe("Alice")

      const second = yield* makeStoreAuthState(auth)
      const creds = second.state.creds
      expect(isLinked(creds)).toBe(true)
      expect(creds.me).toEqual({ id: "15551234567:3@s.whatsapp.net", lid: "99887766554433:3@lid", name: "Alice" })
      expect(creds.registrationId).toBe(first.state.creds.registrationId)
      expect(creds.advSecretKey).toBe(first.state.creds.advSecretKey)
      for (const pair of [creds.noiseKey, creds.signedIdentityKey, creds.pairingEphemeralKeyPair, creds.signedPreKey.keyPair]) {
        expect(Buffer.isBuffer(pair.public) && Buffer.isBuffer(pair.private)).toBe(true)
      }
      expect(bytes(creds.noiseKey.private)).toEqual(bytes(first.state.creds.noiseKey.private))
      expect(bytes(creds.signedPreKey.signature)).toEqual(bytes(first.state.creds.signedPreKey.signature))
      expect(Buffer.isBuffer(creds.signalIdentities![0]!.identifierKey)).toBe(true)
      // Baileys re-encodes `account` for every pkmsg it sends: it must produce the same bytes.
      expect(bytes(proto.ADVSignedDeviceIdentity.encode(creds.account!).finish())).toEqual(bytes(encodedAccount))
    }).pipe(Effect.provide(authStoreLayer())))

  it.effect("a half-done pairing (code requested, never entered) is forgotten on load, so Baileys registers afresh", () =>
    Effect.gen(function*() {
      const auth = yield* realAuth
      const first = yield* makeStoreAuthState(auth)
      // What Baileys' requestPairingCode does, then emits as creds.update.
      yield* first.saveCreds({ me: { id: "15551234567@s.whatsapp.net", name: "~" }, pairingCode: "ABCD1234" })
      const { state } = yield* makeStoreAuthState(auth)
      expect(state.creds.me).toBeUndefined()
      expect(state.creds.pairingCode).toBeUndefined()
      // The identity itself is kept.
      expect(bytes(state.creds.noiseKey.public)).toEqual(bytes(first.state.creds.noiseKey.public))
    }).pipe(Effect.provide(authStoreLayer())))

  it("a requested pairing code does not make the account linked; pair-success does", () => {
    const creds = initAuthCreds()
    expect(isLinked(creds)).toBe(false)
    // What Baileys' requestPairingCode writes before anyone entered the code.
    creds.me = { id: "15551234567@s.whatsapp.net", name: "~" }
    expect(isLinked(creds)).toBe(false)
    creds.account = proto.ADVSignedDeviceIdentity.create({ details: Buffer.from("d") })
    expect(isLinked(creds)).toBe(true)
  })
})
