import type { StoreUnavailable } from "../../../domain/Errors.js"
import { untilStoreIsBack } from "../../storeOutage.js"
import { Array, Clock, Deferred, Duration, Effect, Layer, Option, Ref } from "effect"
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
    const scope = yield* Effect.scope
    // True while QRs are shown: the only time a pairing code makes sense.
    const awaitingLink = yield* Ref.make(false)
    const pairingCodeEntered = yield* Deferred.make<void>()
    const enterPairingCodeSoon = Effect.sleep(pairingCodeEntryDelay).pipe(
      Effect.zipRight(Deferred.succeed(pairingCodeEntered, undefined))
    )

    const lifecycle = auth.readCreds.pipe(
      Effect.flatMap(Option.match({
        // A dropped or replaced connection must not go on linking (nor write creds) behind its successor.
        onNone: () => Effect.raceFirst(linkDevice(network, line, { auth, sessionId, settings }, awaitingLink, pairingCodeEntered), line.awaitClosed),
        // No race: becoming ready does nothing on a line that is no longer live, and the race's
        // two fibers were most of what a linked session's connect cost.
        onSome: () => line.becomeReady
      }))
    )
    yield* Effect.forkScoped(lifecycle)

    return Object.assign(new ReadThroughLine(line), {
      takeEvents: line.takeEvents,
      send: line.send,
      react: line.react,
      downloadMedia: line.downloadMedia,
      requestPairingCode: (phoneNumber: string) =>
        requestPairingCode(phoneNumber, awaitingLink).pipe(
          // The code is "typed in" later, by a fiber of the connection rather than of the caller.
          Effect.tap(() => Effect.forkIn(enterPairingCodeSoon, scope))
        ),
      markRead: line.markRead,
      logout: logout(line, auth.clear)
    }) satisfies EngineConnection
  })

/**
 * Linking a new device: QRs rotating until the simulated phone scans one (after the network's
 * `pairDelay`) or a pairing code is entered, then credentials written and the line ready. Made
 * only for a session without credentials: a linked one's connection holds none of it.
 */
const linkDevice = (
  network: SandboxNetwork["Type"],
  line: SandboxLine,
  { auth, sessionId, settings }: Pick<ConnectOptions, "auth" | "sessionId" | "settings">,
  awaitingLink: Ref.Ref<boolean>,
  pairingCodeEntered: Deferred.Deferred<void>
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
    yield* Ref.set(awaitingLink, true)
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
 * A connection's operations, read through from its line, which makes them when first used.
 * Getters of a class, not of an object literal: those were ten closures per connected session.
 */
class ReadThroughLine {
  constructor(private readonly line: SandboxLine) {}
  get events() {
    return streamOfEvents(this.line.takeEvents)
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
}

/**
 * Any well-formed number is accepted: the sandbox identity comes from the session id, and the
 * phone that enters the code is simulated.
 */
const requestPairingCode = (phoneNumber: string, awaitingLink: Ref.Ref<boolean>) =>
  Effect.gen(function*() {
    if (!phoneNumberPattern.test(phoneNumber)) {
      return yield* new EngineError({ code: "INVALID_PHONE_NUMBER", message: "phoneNumber must be 6–15 digits", transient: false })
    }
    if (!(yield* Ref.get(awaitingLink))) {
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
    newMessageId: newSandboxMessageId,
    forget: network.forget,
    connect: (options) => connect(network, options)
  })))
)
