import type { StoreUnavailable } from "../../../domain/Errors.js"
import {
  type AuthenticationCreds,
  type AuthenticationState,
  initAuthCreds,
  proto,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore
} from "@whiskeysockets/baileys"
import { Effect, Option, Runtime } from "effect"
import { type AuthState, EngineError } from "../../Engine.js"

/**
 * Baileys' `AuthenticationState` over the gateway's `AuthState` (the Store), so that no auth
 * file ever touches the disk.
 *
 * Values need no `BufferJSON` of their own: the Store already encodes `Buffer`/`Uint8Array`
 * as base64 and revives them as `Buffer`s, which is what Baileys' `BufferJSON` does. Protobuf
 * message instances serialise through their own `toJSON` (bytes as base64 strings); Baileys
 * revives the one type that needs it (`app-state-sync-key`) with `fromObject`, and protobufjs
 * encodes base64 strings in bytes fields as bytes, as with Baileys' own file store.
 */

export interface StoreAuthState {
  /** Handed to `makeWASocket({ auth })`; Baileys mutates `creds` in place on `creds.update`. */
  readonly state: AuthenticationState
  /** Merges an update into `state.creds` and persists the whole of it. */
  readonly saveCreds: (update?: Partial<AuthenticationCreds>) => Effect.Effect<void, StoreUnavailable>
}

/** Types whose stored JSON must be turned back into a protobuf message. */
const reviveKey = (type: keyof SignalDataTypeMap, value: unknown): unknown =>
  type === "app-state-sync-key" ? proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>) : value

/**
 * The Signal key store. `set` is called by Baileys with one transaction's mutations batched
 * together: it becomes ONE `setKeys`, i.e. one database transaction, so a crash never leaves
 * half a ratchet step behind (the cause of "Bad MAC" / "No session record").
 */
export const makeSignalKeyStore = (auth: AuthState, runtime: Runtime.Runtime<never>): SignalKeyStore => {
  const run = Runtime.runPromise(runtime)
  return {
    get: <T extends keyof SignalDataTypeMap>(type: T, ids: Array<string>) =>
      run(auth.getKeys(type, ids).pipe(Effect.map((found) => {
        const out: { [id: string]: SignalDataTypeMap[T] } = {}
        // Missing ids are left out, as Baileys expects.
        for (const id of ids) {
          const value = found[id]
          if (value != null) out[id] = reviveKey(type, value) as SignalDataTypeMap[T]
        }
        return out
      }))),
    set: (data: SignalDataSet) => {
      const changes: Record<string, Record<string, unknown | null>> = {}
      for (const [type, entries] of Object.entries(data)) {
        if (entries === undefined) continue
        const normalised: Record<string, unknown | null> = {}
        for (const [id, value] of Object.entries(entries)) normalised[id] = value ?? null
        if (Object.keys(normalised).length > 0) changes[type] = normalised
      }
      return Object.keys(changes).length === 0 ? Promise.resolve() : run(auth.setKeys(changes))
    },
    clear: () => run(auth.clear)
  }
}

/** Loads the creds (or starts a fresh identity) and builds the state Baileys connects with. */
export const makeStoreAuthState = (auth: AuthState) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    // Without its credentials the session cannot log in: a transient failure, retried on the
    // session's reconnect schedule like a dropped connection.
    const stored = yield* Effect.catchTag(auth.readCreds, "StoreUnavailable", (outage) =>
      Effect.fail(new EngineError({ code: "STORE_UNAVAILABLE", message: outage.message, transient: true })))
    const creds = Option.match(stored, {
      onNone: () => initAuthCreds(),
      onSome: (value) => value as AuthenticationCreds
    })
    // Baileys writes `me` when a pairing code is requested, and with `me` present it logs in
    // instead of registering: a pairing that never completed would come back as a 401 (and
    // `logged_out`) rather than as a new QR. Forget the half-done pairing instead.
    if (!isLinked(creds) && creds.me !== undefined) {
      delete creds.me
      creds.pairingCode = undefined
    }
    const state: AuthenticationState = { creds, keys: makeSignalKeyStore(auth, runtime) }
    const saveCreds = (update?: Partial<AuthenticationCreds>) =>
      Effect.suspend(() => {
        // Baileys merges too (its own listener runs first); assigning again is harmless and
        // keeps this correct when called on its own.
        if (update !== undefined) Object.assign(state.creds, update)
        return auth.writeCreds(state.creds)
      })
    return { state, saveCreds } satisfies StoreAuthState
  })

/**
 * Whether these creds belong to a linked account. Not just `me`: Baileys sets `me` as soon as
 * a pairing code is requested, while `account` (the signed device identity) only comes with
 * pair-success.
 */
export const isLinked = (creds: AuthenticationCreds): boolean =>
  creds.account != null && creds.me?.id !== undefined && creds.me.id !== ""
