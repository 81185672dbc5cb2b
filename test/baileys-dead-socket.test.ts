import { ConfigProvider, Duration, Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { settingsConfig } from "../src/app/Config.js"
import { eventually, TEST_KEY, tempDir } from "./support/gateway.js"
import { useGatewayProcesses } from "./support/process.js"
import { type ReceivedMessage, startWaPeer, type WaPeer } from "./support/wa-peer/index.js"

/**
 * Dead sockets (issue 21, point 5), with the built gateway (real Baileys) against the loopback
 * peer: the peer goes silent without closing (it keeps the TCP connection, answers no
 * keep-alive ping, no stanza, not even the client's close frame), as a hung server or a path
 * that swallows packets does. The gateway must notice by itself, cut the socket without waiting
 * for TCP or for the websocket's close handshake (30 s), and be ready again on a new socket.
 * The times are measured on the peer's side: when the client closed the silent socket, when
 * it logged in again.
 */

const BOB = "15551230002"

let peer: WaPeer
const spawnGateway = useGatewayProcesses()

beforeAll(async () => {
  peer = await startWaPeer()
})
afterAll(async () => {
  await peer.close()
})

/** A gateway process with `env` (WA_KEEPALIVE_INTERVAL_MS…), linked as `phone`. */
const linkedGateway = async (phone: string, env: Record<string, string>) => {
  const gateway = await spawnGateway({
    dataDir: tempDir("switchboard-dead-socket-"),
    env: { API_KEY: TEST_KEY, ENGINE: "baileys", ...peer.processEnv(), ...env }
  })
  const created = await gateway.call("POST", "/api/sessions", { body: { name: `silent-${phone}`, autoStart: true } })
  const sessionId = created.body.id as string
  const qr = await eventually(() => gateway.call("GET", `/api/sessions/${sessionId}/qr`), (r) => r.status === 200, 15_000)
  await peer.scan(qr.body.qr, { phone })
  const session = () => gateway.call("GET", `/api/sessions/${sessionId}`)
  await eventually(session, (r) => r.body.status === "ready", 15_000)
  return { gateway, sessionId, session }
}

/**
 * Silences the account's socket and follows the session back to ready; the statuses it went
 * through (as polled), and the peer's times, in ms after the silence began: the client's close
 * of the silent socket, and its next login.
 */
const silenceAndRecover = async (phone: string, session: () => Promise<{ body: any }>, withinMs: number) => {
  const logins = peer.loginsOf(phone).length
  const silent = peer.loginsOf(phone).at(-1)!
  expect(peer.silence(phone)).toBe(1)
  const silencedAt = Date.now()
  const seen: Array<string> = []
  const back = await eventually(async () => {
    const r = await session()
    if (seen.at(-1) !== r.body.status) seen.push(r.body.status)
    return r
  }, (r) => r.body.status === "ready" && peer.loginsOf(phone).length > logins, withinMs)
  const next = peer.loginsOf(phone)[logins]!
  return {
    seen,
    lastError: back.body.lastError,
    cutAfter: silent.closedAt! - silencedAt,
    loggedInAfter: next.loggedInAt - silencedAt,
    readyAfter: Date.now() - silencedAt,
    next
  }
}

describe("a socket that goes silent without closing", () => {
  it("is cut after two keep-alive intervals without an answer, and the session is ready again on a new socket", async () => {
    const ALICE = "15551230001"
    const { gateway, session, sessionId } = await linkedGateway(ALICE, { WA_KEEPALIVE_INTERVAL_MS: "2000" })
    // A message sent to the account while its socket is silent is not lost with it.
    const silentLogin = peer.loginsOf(ALICE).at(-1)!
    const recovered = silenceAndRecover(ALICE, session, 15_000)
    await peer.contact(BOB).send(ALICE, "while you were silent")
    const { cutAfter, lastError, loggedInAfter, next, readyAfter, seen } = await recovered
    console.log(`dead socket, 2 s interval: cut after ${cutAfter} ms, logged in again after ${loggedInAfter} ms, ready (as polled) after ${readyAfter} ms`)

    // Nothing arrived for at most two intervals (4 s): Baileys alone takes ~40 s (its own check
    // after 7 s, then the websocket's 30 s close handshake with a server that never answers).
    expect(cutAfter).toBeLessThan(5_000)
    expect(readyAfter).toBeLessThan(10_000)
    expect(seen).toEqual(["ready", "disconnected", "ready"])
    expect(lastError).toMatchObject({ code: "CONNECTION_LOST" })
    expect(lastError.message).toContain("keep-alive pings unanswered")
    // The client closed the silent socket itself, before it logged in again: the peer never did.
    expect(silentLogin.closedAt).toBeLessThanOrEqual(next.openedAt)
    expect(next.concurrent).toBe(0)

    const received = await eventually(
      () => gateway.call("GET", `/api/sessions/${sessionId}/messages?direction=in&chatId=${BOB}@c.us`),
      (r) => r.body.data.some((m: { text: string }) => m.text === "while you were silent"),
      15_000
    )
    expect(received.body.data.filter((m: { text: string }) => m.text === "while you were silent")).toHaveLength(1)
    const delivered = peer.waitFor<ReceivedMessage>("received", (m) => m.text === "after the silence", 15_000)
    await gateway.call("POST", `/api/sessions/${sessionId}/messages/send-text`, { body: { chatId: `${BOB}@c.us`, text: "after the silence" } })
    await delivered
  }, 60_000)

  it("with the default keep-alive interval (20 s), the session is ready again within 60 s", async () => {
    const CAROL = "15551230003"
    const { session } = await linkedGateway(CAROL, {})
    const { cutAfter, lastError, loggedInAfter, readyAfter } = await silenceAndRecover(CAROL, session, 60_000)
    console.log(`dead socket, default interval: cut after ${cutAfter} ms, logged in again after ${loggedInAfter} ms, ready (as polled) after ${readyAfter} ms`)
    // Two intervals (40 s) at most since the last answer, then the reconnect's backoff (≤ 1 s).
    expect(cutAfter).toBeLessThanOrEqual(41_000)
    expect(readyAfter).toBeLessThan(60_000)
    expect(lastError).toMatchObject({ code: "CONNECTION_LOST" })
  }, 120_000)
})

describe("stopping a session whose socket is silent", () => {
  it("takes 2 s and cuts the socket: neither waits for the websocket's 30 s close handshake", async () => {
    const DAVE = "15551230004"
    const { gateway, session, sessionId } = await linkedGateway(DAVE, {})
    const silent = peer.loginsOf(DAVE).at(-1)!
    expect(peer.silence(DAVE)).toBe(1)
    const stoppedAt = Date.now()
    expect((await gateway.call("POST", `/api/sessions/${sessionId}/stop`)).status).toBe(200)
    await eventually(session, (r) => r.body.status === "stopped", 40_000)
    const stoppedAfter = Date.now() - stoppedAt
    await eventually(async () => silent.closedAt, (closedAt) => closedAt !== undefined, 40_000)
    console.log(`stop on a silent socket: stopped after ${stoppedAfter} ms, socket closed after ${silent.closedAt! - stoppedAt} ms`)
    // The stop waits 2 s for the close handshake, then cuts what is still open (it took 30 s).
    expect(stoppedAfter).toBeLessThan(5_000)
    expect(silent.closedAt! - stoppedAt).toBeLessThan(5_000)
  }, 60_000)
})

describe("WA_KEEPALIVE_INTERVAL_MS", () => {
  it("is 20 s unless set; under a second it stops the start with the reason", () => {
    const read = (env: Record<string, string>) =>
      Effect.runSyncExit(settingsConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))
    const unset = read({})
    expect(Exit.isSuccess(unset) && Duration.toMillis(unset.value.waKeepAliveInterval)).toBe(20_000)
    const given = read({ WA_KEEPALIVE_INTERVAL_MS: "5000" })
    expect(Exit.isSuccess(given) && Duration.toMillis(given.value.waKeepAliveInterval)).toBe(5_000)
    for (const bad of ["0", "999"]) {
      const refused = read({ WA_KEEPALIVE_INTERVAL_MS: bad })
      expect(Exit.isFailure(refused), bad).toBe(true)
      expect(String(Exit.isFailure(refused) ? refused.cause : ""), bad).toContain("WA_KEEPALIVE_INTERVAL_MS must be a number of milliseconds ≥ 1000")
    }
    expect(Exit.isFailure(read({ WA_KEEPALIVE_INTERVAL_MS: "often" }))).toBe(true)
  })
})
