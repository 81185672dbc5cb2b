import { Boom } from "@hapi/boom"
import { DisconnectReason } from "@whiskeysockets/baileys"
import { describe, expect, it } from "vitest"
import { DeadSocket } from "../src/runtime/engines/baileys/deadSocket.js"
import { baileysCloseOf, closeMessageOf, closeReasonOf, engineErrorOf, isNetworkError, statusCodeOf } from "../src/runtime/engines/baileys/disconnect.js"
import { ServerIdentityInvalid } from "../src/runtime/engines/baileys/serverIdentity.js"

const close = (statusCode: number | undefined, linked: boolean) =>
  closeReasonOf({ statusCode, linked, qrShown: !linked, networkError: false, message: "Stream Errored" })

describe("Baileys disconnect table", () => {
  it.each([
    // [code, linked, kind, code]
    [401, true, "logged_out", "LOGGED_OUT"],
    [401, false, "logged_out", "LOGGED_OUT"],
    [403, true, "fatal", "FORBIDDEN"],
    [411, true, "fatal", "MULTIDEVICE_MISMATCH"],
    [440, true, "fatal", "CONNECTION_REPLACED"],
    [440, false, "fatal", "CONNECTION_REPLACED"],
    [408, false, "fatal", "QR_EXPIRED"],
    [408, true, "retry", "CONNECTION_LOST"],
    [515, false, "restart", "RESTART_REQUIRED"],
    [515, true, "restart", "RESTART_REQUIRED"],
    [428, true, "retry", "CONNECTION_CLOSED"],
    [428, false, "retry", "CONNECTION_CLOSED"],
    [500, true, "retry", "BAD_SESSION"],
    [503, true, "retry", "SERVICE_UNAVAILABLE"],
    [599, true, "retry", "DISCONNECTED_599"],
    [undefined, true, "retry", "CONNECTION_ENDED"]
  ] as const)("%s (linked: %s) → %s %s", (statusCode, linked, kind, code) => {
    const reason = close(statusCode, linked)
    expect(reason.kind).toBe(kind)
    expect(reason.code).toBe(code)
    expect(reason.message).toContain("Stream Errored")
  })

  it("a server that failed the identity check: fatal SERVER_IDENTITY_INVALID with the reason, linked or not", () => {
    for (const linked of [true, false]) {
      const reason = closeReasonOf(baileysCloseOf(new ServerIdentityInvalid("its certificate is not signed by its intermediate certificate"), linked, false))
      expect(reason).toMatchObject({ kind: "fatal", code: "SERVER_IDENTITY_INVALID" })
      expect(reason.message).toContain("its certificate is not signed by its intermediate certificate")
    }
  })

  it("agrees with Baileys' DisconnectReason values", () => {
    expect(close(DisconnectReason.loggedOut, true).code).toBe("LOGGED_OUT")
    expect(close(DisconnectReason.connectionReplaced, true).code).toBe("CONNECTION_REPLACED")
    expect(close(DisconnectReason.restartRequired, true).kind).toBe("restart")
    expect(close(DisconnectReason.multideviceMismatch, true).code).toBe("MULTIDEVICE_MISMATCH")
    expect(close(DisconnectReason.forbidden, true).code).toBe("FORBIDDEN")
    expect(close(DisconnectReason.timedOut, false).code).toBe("QR_EXPIRED")
    expect(close(DisconnectReason.unavailableService, true).kind).toBe("retry")
    expect(close(DisconnectReason.badSession, true).kind).toBe("retry")
    expect(close(DisconnectReason.connectionClosed, true).kind).toBe("retry")
  })

  it("reads the status code and message of a Boom the way Baileys reports closes", () => {
    const error = new Boom("QR refs attempts ended", { statusCode: DisconnectReason.timedOut })
    expect(statusCodeOf(error)).toBe(408)
    expect(closeMessageOf(error)).toBe("QR refs attempts ended")
    expect(closeReasonOf(baileysCloseOf(error, false, true))).toEqual({
      kind: "fatal",
      code: "QR_EXPIRED",
      message: "baileys: QR refs attempts ended (408)"
    })
    expect(statusCodeOf(new Error("plain"))).toBeUndefined()
    expect(statusCodeOf(undefined)).toBeUndefined()
  })

  it("a 408 before linking is QR_EXPIRED only when QRs were up and the network did not fail", () => {
    // What Baileys makes of ECONNREFUSED / ENOTFOUND / timeouts: 408 too.
    const refused = new Boom("WebSocket Error (connect ECONNREFUSED 127.0.0.1:1)", {
      statusCode: 408,
      data: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })
    })
    expect(isNetworkError(refused)).toBe(true)
    expect(closeReasonOf(baileysCloseOf(refused, false, false))).toMatchObject({ kind: "retry", code: "CONNECTION_LOST" })
    expect(closeReasonOf(baileysCloseOf(refused, false, true))).toMatchObject({ kind: "retry", code: "CONNECTION_LOST" })
    const expired = new Boom("QR refs attempts ended", { statusCode: 408 })
    expect(isNetworkError(expired)).toBe(false)
    expect(closeReasonOf(baileysCloseOf(expired, false, false))).toMatchObject({ kind: "retry" })
    expect(closeReasonOf(baileysCloseOf(expired, false, true))).toMatchObject({ kind: "fatal", code: "QR_EXPIRED" })
  })

  it("a socket cut for its silence is a lost connection, retried, even while a QR is up (not QR_EXPIRED)", () => {
    const cut = new DeadSocket(40_000)
    expect(closeReasonOf(baileysCloseOf(cut, false, true))).toMatchObject({ kind: "retry", code: "CONNECTION_LOST" })
    expect(closeReasonOf(baileysCloseOf(cut, true, false))).toEqual({
      kind: "retry",
      code: "CONNECTION_LOST",
      message: "baileys: no answer from WhatsApp for 40 s (keep-alive pings unanswered); the socket was cut (408)"
    })
  })

  it("turns failed operations into EngineErrors, transient only for connection trouble", () => {
    expect(engineErrorOf("SEND", new Boom("Connection Closed", { statusCode: 428 })).transient).toBe(true)
    expect(engineErrorOf("SEND", new Boom("Timed Out", { statusCode: 408 })).transient).toBe(true)
    expect(engineErrorOf("SEND", new Boom("bad-request", { statusCode: 400 }))).toMatchObject({ code: "SEND_FAILED_400", transient: false })
    expect(engineErrorOf("PAIRING_CODE", new Error("Connection Closed")).transient).toBe(true)
    expect(engineErrorOf("SEND", new TypeError("Cannot read properties of undefined")).transient).toBe(false)
  })
})
