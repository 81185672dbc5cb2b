import type { StoreUnavailable } from "../../../domain/Errors.js"
import { untilStoreIsBack } from "../../storeOutage.js"
import { Array, Clock, Deferred, Duration, Effect, Layer, Option, Ref, type Scope } from "effect"
import { type ConnectOptions, Engine, type EngineConnection, EngineError, EngineEvent, streamOfEvents } from "../../Engine.js"
import { newPairingCode, newQrRef, newSandboxMessageId } from "./identity.js"
import { type SandboxLine, SandboxNetwork } from "./SandboxNetwork.js"
import { CallSimulator } from "../../ports/CallSimulator.js"


/**
 * The sandbox engine: a WhatsApp look-alike for trying the gateway and testing bots without a
 * phone. Linking is simulated here (QRs rotating like WhatsApp's, then an automatic "scan" or a
 * pairing code); everything on the wire goes through the process-wide `SandboxNetwork`.
 */

/** WhatsApp shows the first QR for 60 s and each following one for 20 s, five in all. */
const firstQrLifetime = Duration.seconds(60)
const laterQrLifetime = Duration.seconds(20)
const maxQrs = 5
/** The simulated user types the pairing code into the phone this long after it was issued. */
const pairingCodeEntryDelay = Duration.millis(200)
const phoneNumberPattern = /^\+?\d{6,15}$/

const connect = (network: SandboxNetwork["Type"], { auth, sessionId, settings }: ConnectOptions) =>
  Effect.gen(function*() {
    const line = yield* network.attach(sessionId)
    const connection = new SandboxConnection(line, auth, yield* Effect.scope)
    const lifecycle = auth.readCreds.pipe(
      Effect.flatMap(Option.match({
        // A dropped or replaced connection must not go on linking (nor write creds) behind its successor.
        onNone: () =>
          Effect.flatMap(Effect.zip(Ref.make(true), Deferred.make<void>()), ([awaitingLink, pairingCodeEntered]) => {
            const linking = connection.linking = { awaitingLink, pairingCodeEntered }
            return Effect.raceFirst(linkDevice(network, line, { auth, sessionId, settings }, linking), line.awaitClosed).pipe(
              Effect.ensuring(Effect.sync(() => void (connection.linking = undefined)))
            )
          }),
        // No race: becoming ready does nothing on a line that is no longer live, and the race's
        // two fibers were most of what a linked session's connect cost.
        onSome: () => line.becomeReady
      }))
    )
    yield* Effect.forkScoped(lifecycle)
    return connection satisfies EngineConnection
  })

/** What linking a new device shares with the connection: whether QRs are shown, and the code's entry. */
interface Linking {
  /** True while QRs are shown: the only time a pairing code makes sense. */
  readonly awaitingLink: Ref.Ref<boolean>
  readonly pairingCodeEntered: Deferred.Deferred<void>
}

/**
 * Linking a new device: QRs rotating until the simulated phone scans one (after the network's
 * `pairDelay`) or a pairing code is entered, then credentials written and the line ready. Made
 * only for a session without credentials: a linked one's connection holds none of it.
 */
const linkDevice = (
  network: SandboxNetwork["Type"],
  line: SandboxLine,
  { auth, sessionId, settings }: Pick<ConnectOptions, "auth" | "sessionId" | "settings">,
  { awaitingLink, pairingCodeEntered }: Linking
) => {
  const showQrsUntilExpired = Effect.forEach(Array.range(1, maxQrs), (n) =>
    Effect.gen(function*() {
      const lifetime = n === 1 ? firstQrLifetime : laterQrLifetime
      const expiresAt = new Date((yield* Clock.currentTimeMillis) + Duration.toMillis(lifetime))
      yield* line.emit(EngineEvent.Qr({ qr: `sandbox:${sessionId}:${yield* newQrRef}`, expiresAt }))
      yield* Effect.sleep(lifetime)
    }), { discard: true })

  const phoneLinks = Effect.race(
    Deferred.await(pairingCodeEntered),
    // pairDelay 0 means the simulated phone never scans by itself.
    Duration.isZero(network.pairDelay) ? Effect.never : Effect.sleep(network.pairDelay)
  )

  return Effect.gen(function*() {
    const outcome = yield* Effect.raceFirst(
      showQrsUntilExpired.pipe(Effect.as("expired" as const)),
      phoneLinks.pipe(Effect.as("linked" as const))
    )
    yield* Ref.set(awaitingLink, false)
    if (outcome === "expired") {
      yield* line.close({ kind: "fatal", code: "QR_EXPIRED", message: `sandbox: no device linked after ${maxQrs} QR codes` })
      return
    }
    yield* line.emit(EngineEvent.Authenticating())
    const linkedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
    yield* auth.writeCreds({ phone: line.me.phone, linkedAt })
    yield* line.becomeReady
    yield* line.offerHistory(settings.historySync)
  })
}

/**
 * A sandbox connection: its operations read through from its line, which makes them when first
 * used, and made themselves when used. Getters and methods of a class, not the closures and
 * effects of an object literal: every running session holds its connection (issue 19: memory
 * per idle session). `linking` exists only while a new device is being linked.
 */
class SandboxConnection {
  linking: Linking | undefined
  constructor(
    private readonly line: SandboxLine,
    private readonly auth: ConnectOptions["auth"],
    /** The connection's scope: a pairing code is "typed in" by a fiber of the connection, not of the caller. */
    private readonly scope: Scope.Scope
  ) {}
  get events() {
    return streamOfEvents(this.line.takeEvents, this.line.acknowledge)
  }
  get takeEvents() {
    return this.line.takeEvents
  }
  get acknowledge() {
    return this.line.acknowledge
  }
  get send() {
    return this.line.send
  }
  get react() {
    return this.line.react
  }
  get markRead() {
    return this.line.markRead
  }
  get downloadMedia() {
    return this.line.downloadMedia
  }
  get groups() {
    return this.line.groups
  }
  get channels() {
    return this.line.channels
  }
  get labels() {
    return this.line.labels
  }
  get contacts() {
    return this.line.contacts
  }
  get messages() {
    return this.line.messages
  }
  get presence() {
    return this.line.presence
  }
  get chats() {
    return this.line.chats
  }
  get profile() {
    return this.line.profile
  }
  get calls() {
    return this.line.calls
  }
  get logout() {
    return logout(this.line, this.auth.clear)
  }
  requestPairingCode(phoneNumber: string) {
    const linking = this.linking
    if (linking === undefined) return requestPairingCode(phoneNumber, false)
    return Effect.tap(
      Effect.flatMap(Ref.get(linking.awaitingLink), (awaiting) => requestPairingCode(phoneNumber, awaiting)),
      () => Effect.forkIn(Effect.zipRight(Effect.sleep(pairingCodeEntryDelay), Deferred.succeed(linking.pairingCodeEntered, undefined)), this.scope)
    )
  }
}

/**
 * Any well-formed number is accepted: the sandbox identity comes from the session id, and the
 * phone that enters the code is simulated.
 */
const requestPairingCode = (phoneNumber: string, awaitingLink: boolean) =>
  Effect.gen(function*() {
    if (!phoneNumberPattern.test(phoneNumber)) {
      return yield* new EngineError({ code: "INVALID_PHONE_NUMBER", message: "phoneNumber must be 6–15 digits", transient: false })
    }
    if (!awaitingLink) {
      return yield* new EngineError({ code: "NOT_LINKING", message: "sandbox: the session is not waiting to be linked", transient: false })
    }
    return yield* newPairingCode
  })

const logout = (line: SandboxLine, clearAuth: Effect.Effect<void, StoreUnavailable>) =>
  line.close({ kind: "logged_out", code: "LOGGED_OUT", message: "sandbox: the device was unlinked" }).pipe(
    Effect.flatMap((wasLive) =>
      wasLive
        ? untilStoreIsBack(clearAuth, "unlinking a sandbox device")
        : Effect.fail(new EngineError({ code: "NOT_CONNECTED", message: "sandbox: the session is not connected", transient: true }))
    )
  )

/** The sandbox's network rings sessions on request (`POST /api/sandbox/sessions/{id}/incoming-call`). */
export const SandboxCallSimulator: Layer.Layer<CallSimulator, never, SandboxNetwork> = Layer.effect(
  CallSimulator,
  Effect.map(SandboxNetwork, (network) => CallSimulator.of({ ring: network.ring }))
)

export const SandboxEngineLive: Layer.Layer<Engine, never, SandboxNetwork> = Layer.effect(
  Engine,
  SandboxNetwork.pipe(Effect.map((network) => Engine.of({
    name: "sandbox",
    clientVersion: null,
    newMessageId: newSandboxMessageId,
    forget: network.forget,
    connect: (options) => connect(network, options)
  })))
)
