import type { AuthenticationCreds, BaileysEventMap, Contact } from "@whiskeysockets/baileys"
import type { Me } from "../../../domain/Session.js"
import { EngineEvent } from "../../Engine.js"
import { isLinked } from "./authState.js"
import { baileysCloseOf, closeReasonOf } from "./disconnect.js"

/**
 * `connection.update` → the engine's lifecycle events, for one socket. Stateful only in
 * counting QRs: WhatsApp shows the first for 60 s and each following one for 20 s, and a 408
 * means "QR expired" only once QRs were shown.
 */

const FIRST_QR_MS = 60_000
const LATER_QR_MS = 20_000

/** `creds.me` (`123:4@s.whatsapp.net`, `456:4@lid`) in the API's terms. */
export const meOf = (me: Contact | undefined): Me | null => {
  const phone = me?.id.split("@")[0]?.split(":")[0]
  if (me === undefined || phone === undefined || phone === "") return null
  const lid = me.lid?.split("@")[0]?.split(":")[0]
  return { id: `${phone}@c.us`, phone, lid: lid ? `${lid}@lid` : null, pushName: me.name ?? me.notify ?? null }
}

/** `creds` is read when an update arrives: Baileys has merged the latest `creds.update` by then. */
export const makeConnectionTranslator = (creds: () => AuthenticationCreds) => {
  let qrsShown = 0
  return (update: BaileysEventMap["connection.update"], now: number): Array<EngineEvent> => {
    const { connection, isNewLogin, lastDisconnect, qr } = update
    const out: Array<EngineEvent> = []
    if (qr !== undefined) {
      const lifetime = qrsShown++ === 0 ? FIRST_QR_MS : LATER_QR_MS
      out.push(EngineEvent.Qr({ qr, expiresAt: new Date(now + lifetime) }))
    }
    // Sent on pair-success (QR scanned or pairing code entered); the 515 restart follows.
    if (isNewLogin === true) out.push(EngineEvent.Authenticating())
    if (connection === "open") {
      const me = meOf(creds().me)
      out.push(me === null
        ? EngineEvent.Closed({ reason: { kind: "retry", code: "NO_IDENTITY", message: "baileys: open without an account id" } })
        : EngineEvent.Ready({ me }))
    }
    if (connection === "close") {
      const close = baileysCloseOf(lastDisconnect?.error, isLinked(creds()), qrsShown > 0)
      out.push(EngineEvent.Closed({ reason: closeReasonOf(close) }))
    }
    return out
  }
}
