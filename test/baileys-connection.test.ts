import { Boom } from "@hapi/boom"
import { type AuthenticationCreds, DisconnectReason, initAuthCreds, proto } from "@whiskeysockets/baileys"
import { describe, expect, it } from "vitest"
import type { EngineEvent } from "../src/runtime/Engine.js"
import { makeConnectionTranslator } from "../src/runtime/engines/baileys/connectionUpdate.js"

const NOW = Date.UTC(2024, 0, 1)
const close = (statusCode: number, message = "closed") => ({
  connection: "close" as const,
  lastDisconnect: { error: new Boom(message, { statusCode }), date: new Date(NOW) }
})
const summary = (events: Array<EngineEvent>) =>
  events.map((event) => {
    switch (event._tag) {
      case "Qr":
        return `Qr ${event.qr} +${(event.expiresAt.getTime() - NOW) / 1000}s`
      case "Ready":
        return `Ready ${event.me.phone} ${event.me.lid} ${event.me.pushName}`
      case "Closed":
        return `Closed ${event.reason.kind} ${event.reason.code}`
      default:
        return event._tag
    }
  })

/** Fresh creds, then what pair-success merges into them. */
const linkedCreds = (creds: AuthenticationCreds) =>
  Object.assign(creds, {
    me: { id: "15551234567:4@s.whatsapp.net", lid: "99887766554433:4@lid", name: "Alice" },
    account: proto.ADVSignedDeviceIdentity.create({ details: Buffer.from("d") })
  })

describe("Baileys connection.update → lifecycle events", () => {
  it("linking by QR: QRs with their lifetimes, Authenticating on pair-success, then the 515 restart", () => {
    const creds = initAuthCreds()
    const translate = makeConnectionTranslator(() => creds)
    expect(summary(translate({ connection: "connecting" }, NOW))).toEqual([])
    expect(summary(translate({ qr: "ref1,a,b,c" }, NOW))).toEqual(["Qr ref1,a,b,c +60s"])
    expect(summary(translate({ qr: "ref2,a,b,c" }, NOW))).toEqual(["Qr ref2,a,b,c +20s"])
    linkedCreds(creds)
    // Baileys emits `{ isNewLogin: true, qr: undefined }`; the key is left out here for exactOptionalPropertyTypes.
    expect(summary(translate({ isNewLogin: true }, NOW))).toEqual(["Authenticating"])
    expect(summary(translate(close(DisconnectReason.restartRequired, "Stream Errored (restart required)"), NOW)))
      .toEqual(["Closed restart RESTART_REQUIRED"])
  })

  it("the socket after the restart opens Ready with the account from creds.me", () => {
    const creds = linkedCreds(initAuthCreds())
    const translate = makeConnectionTranslator(() => creds)
    expect(summary(translate({ connection: "open" }, NOW))).toEqual(["Ready 15551234567 99887766554433@lid Alice"])
  })

  it("QRs running out is QR_EXPIRED; a refused socket before any QR is a retry", () => {
    const unlinked = initAuthCreds()
    const shown = makeConnectionTranslator(() => unlinked)
    translate5(shown)
    expect(summary(shown(close(DisconnectReason.timedOut, "QR refs attempts ended"), NOW))).toEqual(["Closed fatal QR_EXPIRED"])
    const never = makeConnectionTranslator(() => unlinked)
    const refused = {
      connection: "close" as const,
      lastDisconnect: {
        error: new Boom("WebSocket Error (connect ECONNREFUSED)", { statusCode: 408, data: { code: "ECONNREFUSED" } }),
        date: new Date(NOW)
      }
    }
    expect(summary(never(refused, NOW))).toEqual(["Closed retry CONNECTION_LOST"])
  })

  it("a linked session: 408 is a retry, 401 logged out, 440 replaced", () => {
    const creds = linkedCreds(initAuthCreds())
    expect(summary(makeConnectionTranslator(() => creds)(close(408), NOW))).toEqual(["Closed retry CONNECTION_LOST"])
    expect(summary(makeConnectionTranslator(() => creds)(close(401), NOW))).toEqual(["Closed logged_out LOGGED_OUT"])
    expect(summary(makeConnectionTranslator(() => creds)(close(440), NOW))).toEqual(["Closed fatal CONNECTION_REPLACED"])
  })

  it("a pairing code requested but never entered does not count as linked", () => {
    const creds = initAuthCreds()
    creds.me = { id: "15551234567@s.whatsapp.net", name: "~" }
    const translate = makeConnectionTranslator(() => creds)
    translate({ qr: "ref1" }, NOW)
    expect(summary(translate(close(408, "QR refs attempts ended"), NOW))).toEqual(["Closed fatal QR_EXPIRED"])
  })
})

const translate5 = (translate: ReturnType<typeof makeConnectionTranslator>) => {
  for (let n = 1; n <= 5; n++) translate({ qr: `ref${n}` }, NOW)
}
