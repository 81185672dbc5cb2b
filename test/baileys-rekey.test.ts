import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { baileysGatewayOn, type RestartableBaileysGateway } from "./support/baileysGateway.js"
import { eventually, tempDir, TEST_KEY, type TestGateway } from "./support/gateway.js"
import { type GatewayProcess, useGatewayProcesses } from "./support/process.js"
import { type KeyQuery, type ReceivedMessage, startWaPeer, type WaPeer } from "./support/wa-peer/index.js"

/**
 * Issue 21, point 3: a restarted gateway goes on with the Signal sessions it has. Before, Baileys
 * forgot its contacts' devices with the process, asked the server for them again, and (rc14) threw
 * the sessions away after that question: the first message to each contact after every restart
 * was a prekey message (`pkmsg`) that used up one of the contact's one-time prekeys.
 *
 * A contact that has answered once gets normal messages (`msg`) from then on; that is what the
 * peer checks after each kind of restart (the session stopped and started, the gateway's layers
 * built anew on the same database, the built gateway SIGKILLed and spawned again), and that the
 * client asked the server for no keys and no devices to send it.
 */

const ALICE = "15551230101"
const BOB = "15551230102"
const CAROL = "15551230103"
const DAN = "15551230104"

/** Sends `text` to `phone` through the API; what that phone received (with the `<enc type>` it came in). */
const sendThrough = async (
  peer: WaPeer,
  gateway: Pick<TestGateway, "call">,
  sessionId: string,
  phone: string,
  text: string,
  timeoutMs: number
): Promise<ReceivedMessage> => {
  const received = peer.waitFor<ReceivedMessage>("received", (m) => m.text === text, timeoutMs)
  const sent = await gateway.call("POST", `/api/sessions/${sessionId}/messages/send-text`, { body: { chatId: `${phone}@c.us`, text } })
  expect(sent.status).toBe(201)
  return received
}

/**
 * Links a new session as `me` and holds a first exchange with `contact`: the first message starts
 * a Signal session (a prekey message); the contact answers, and the answer is stored. Until the
 * contact answers, `me` cannot know the session arrived: libsignal keeps sending prekey messages.
 * Returns the session's id.
 */
const linkAndExchange = async (
  peer: WaPeer,
  gateway: Pick<TestGateway, "call">,
  { contact, contactName, me, name, timeoutMs }: {
    readonly name: string
    readonly me: string
    readonly contact: string
    readonly contactName: string
    readonly timeoutMs: number
  }
): Promise<string> => {
  const created = await gateway.call("POST", "/api/sessions", { body: { name, autoStart: true } })
  const sessionId: string = created.body.id
  const qr = await eventually(() => gateway.call("GET", `/api/sessions/${sessionId}/qr`), (r) => r.status === 200, timeoutMs)
  await peer.scan(qr.body.qr, { phone: me })
  await eventually(() => gateway.call("GET", `/api/sessions/${sessionId}`), (r) => r.body.status === "ready", timeoutMs)
  const other = peer.contact(contact, { name: contactName })
  expect((await sendThrough(peer, gateway, sessionId, contact, `hello ${contactName.toLowerCase()}`, timeoutMs)).enc).toBe("pkmsg")
  await other.send(me, `hi ${name}`)
  await eventually(
    () => gateway.call("GET", `/api/sessions/${sessionId}/messages?direction=in`),
    (r) => r.body.data.some((m: { text: string }) => m.text === `hi ${name}`),
    timeoutMs
  )
  return sessionId
}

describe("ENGINE=baileys keeps its Signal sessions over restarts (loopback WhatsApp Web peer)", () => {
  let peer: WaPeer
  let baileys: RestartableBaileysGateway
  let gateway: Omit<TestGateway, "network">
  let sessionId = ""

  const start = async () => {
    gateway = await baileys.start()
  }
  const ready = () =>
    eventually(() => gateway.call("GET", `/api/sessions/${sessionId}`), (r) => r.body.status === "ready", 15_000)

  const sendToBob = (text: string) => sendThrough(peer, gateway, sessionId, BOB, text, 15_000)
  /** The key and device queries of Alice's client since `mark` (an index into `peer.keyQueries`). */
  const queriesSince = (mark: number): Array<KeyQuery> => peer.keyQueries.slice(mark).filter((q) => q.phone === ALICE)

  beforeAll(async () => {
    peer = await startWaPeer()
    baileys = baileysGatewayOn(peer, tempDir("switchboard-rekey-"))
    await start()
  })
  afterAll(async () => {
    await baileys.stop()
    await peer?.close()
  })

  it("a conversation: the first message starts a session (pkmsg), after Bob's answer they are normal messages", async () => {
    sessionId = await linkAndExchange(peer, gateway, { name: "alice", me: ALICE, contact: BOB, contactName: "Bob", timeoutMs: 15_000 })
    const mark = peer.keyQueries.length
    expect((await sendToBob("how are you")).enc).toBe("msg")
    expect(queriesSince(mark)).toEqual([])
  })

  it("after the session is stopped and started again: a normal message, and no key or device query", async () => {
    await gateway.call("POST", `/api/sessions/${sessionId}/stop`)
    await eventually(() => gateway.call("GET", `/api/sessions/${sessionId}`), (r) => r.body.status === "stopped", 15_000)
    await gateway.call("POST", `/api/sessions/${sessionId}/start`)
    await ready()
    const mark = peer.keyQueries.length
    expect((await sendToBob("after a session restart")).enc).toBe("msg")
    expect(queriesSince(mark)).toEqual([])
  })

  it("after the whole gateway restarts on the same data: a normal message, and no key or device query", async () => {
    await baileys.stop()
    await start()
    await ready()
    const mark = peer.keyQueries.length
    expect((await sendToBob("after a gateway restart")).enc).toBe("msg")
    expect(queriesSince(mark)).toEqual([])
    expect(peer.errors).toEqual([])
  })
})

describe("the built gateway killed (SIGKILL) and started again on the same DATA_DIR keeps its Signal sessions", () => {
  const spawnGateway = useGatewayProcesses()
  let peer: WaPeer
  let gateway: GatewayProcess
  let sessionId = ""
  const dataDir = tempDir("switchboard-rekey-process-")

  const start = () => spawnGateway({ dataDir, env: { API_KEY: TEST_KEY, ENGINE: "baileys", ...peer.processEnv() } })
  const ready = () => eventually(() => gateway.call("GET", `/api/sessions/${sessionId}`), (r) => r.body.status === "ready", 20_000)
  const send = (text: string) => sendThrough(peer, gateway, sessionId, DAN, text, 20_000)

  beforeAll(async () => {
    peer = await startWaPeer()
  })
  afterAll(async () => {
    await peer?.close()
  })

  it("the first message after the kill is a normal message, and the client asks for no keys or devices", async () => {
    gateway = await start()
    sessionId = await linkAndExchange(peer, gateway, { name: "carol", me: CAROL, contact: DAN, contactName: "Dan", timeoutMs: 20_000 })

    await gateway.kill()
    const mark = peer.keyQueries.length
    gateway = await start()
    await ready()
    expect((await send("after the kill")).enc).toBe("msg")
    expect(peer.keyQueries.slice(mark).filter((q) => q.phone === CAROL)).toEqual([])
    expect(peer.errors).toEqual([])
  }, 120_000)
})
