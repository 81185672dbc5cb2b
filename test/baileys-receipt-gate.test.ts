import { EventEmitter } from "node:events"
import { afterEach, describe, expect, it, vi } from "vitest"
import { EngineEvent } from "../src/runtime/Engine.js"
import { gateReceipts, type GatedClient, HOLD_LIMIT_MS } from "../src/runtime/engines/baileys/receiptGate.js"

/**
 * The receipt gate's rules, on a socket that records what is written (the proof against real
 * Baileys and the peer, with kills, is in inbound-kill.test.ts): frames go at once while no
 * message is owed; after a message arrives they wait, in order, until the session acknowledged
 * what was made of it; an upsert made into nothing settles at once; a message Baileys never
 * upserts holds the socket back no longer than HOLD_LIMIT_MS; a query Baileys awaits the answer
 * to is held only once the messages before it reached the session.
 */
const recordingClient = () => {
  const written: Array<string> = []
  const client = Object.assign(new EventEmitter(), {
    socket: { send: (data: unknown, callback?: (error?: Error) => void) => {
      written.push(String(data))
      callback?.()
    } }
  })
  /** As Baileys' `query`: listen for the answer's tag, then write the query. */
  const query = (id: string) => {
    client.on(`TAG:${id}`, () => {})
    client.socket.send(`query ${id}`, () => {})
  }
  const arrive = (id: string) => client.emit("CB:message", { tag: "message", attrs: { id, from: "15550001111@s.whatsapp.net" } })
  return { client: client as unknown as GatedClient, written, arrive, query }
}

const received = (id: string) =>
  EngineEvent.MessageReceived({
    message: { engineMessageId: id, chatId: "15550001111@c.us", from: "15550001111@c.us", fromPhone: null, fromLid: null, type: "text", text: "hi", timestamp: new Date(0) }
  })

afterEach(() => {
  vi.useRealTimers()
})

describe("the receipt gate (Baileys)", () => {
  it("holds what is written after a message arrives until the session acknowledged it, in order", () => {
    const { arrive, client, written } = recordingClient()
    const gate = gateReceipts(client, () => {})
    const sent: Array<string> = []
    client.socket!.send("before", () => sent.push("before"))
    arrive("M1")
    client.socket!.send("receipt M1", () => sent.push("receipt M1"))
    client.socket!.send("presence", () => sent.push("presence"))
    expect(written).toEqual(["before"])
    // Baileys is not kept waiting for a held frame.
    expect(sent).toEqual(["before", "receipt M1", "presence"])
    const event = received("M1")
    gate.handedOver(["M1"], [event])
    expect(written).toEqual(["before"])
    gate.acknowledged([event])
    expect(written).toEqual(["before", "receipt M1", "presence"])
    client.socket!.send("after", () => {})
    expect(written).toEqual(["before", "receipt M1", "presence", "after"])
  })

  it("a query goes at once, with what was held before it: its answer may be what the message waits for", () => {
    const { arrive, client, query, written } = recordingClient()
    const gate = gateReceipts(client, () => {})
    arrive("M1")
    client.socket!.send("receipt M1", () => {})
    expect(written).toEqual([])
    query("Q1")
    expect(written).toEqual(["receipt M1", "query Q1"])
    // Frames after it are held again while M1 is owed; an answer awaited before them is no query.
    client.socket!.send("presence", () => {})
    expect(written).toEqual(["receipt M1", "query Q1"])
    const event = received("M1")
    gate.handedOver(["M1"], [event])
    gate.acknowledged([event])
    expect(written).toEqual(["receipt M1", "query Q1", "presence"])
  })

  it("a query after the message reached the session waits with the rest: the keep-alive ping does not open the window", () => {
    const { arrive, client, query, written } = recordingClient()
    const gate = gateReceipts(client, () => {})
    arrive("M1")
    client.socket!.send("receipt M1", () => {})
    const event = received("M1")
    gate.handedOver(["M1"], [event])
    query("PING")
    expect(written).toEqual([])
    gate.acknowledged([event])
    expect(written).toEqual(["receipt M1", "query PING"])
  })

  it("a frame waits only for the messages that arrived before it", () => {
    const { arrive, client, written } = recordingClient()
    const gate = gateReceipts(client, () => {})
    arrive("M1")
    client.socket!.send("receipt M1", () => {})
    arrive("M2")
    client.socket!.send("receipt M2", () => {})
    const [first, second] = [received("M1"), received("M2")]
    gate.handedOver(["M1"], [first])
    gate.handedOver(["M2"], [second])
    gate.acknowledged([first])
    expect(written).toEqual(["receipt M1"])
    gate.acknowledged([second])
    expect(written).toEqual(["receipt M1", "receipt M2"])
  })

  it("an upsert the engine makes nothing of settles its messages at once", () => {
    const { arrive, client, written } = recordingClient()
    const gate = gateReceipts(client, () => {})
    arrive("P1")
    client.socket!.send("receipt P1", () => {})
    gate.handedOver(["P1"], [])
    expect(written).toEqual(["receipt P1"])
  })

  it(`a message never upserted holds the socket back for ${HOLD_LIMIT_MS} ms at most`, () => {
    vi.useFakeTimers()
    const { arrive, client, written } = recordingClient()
    gateReceipts(client, () => {})
    arrive("X1")
    client.socket!.send("nack X1", () => {})
    vi.advanceTimersByTime(HOLD_LIMIT_MS - 1)
    expect(written).toEqual([])
    vi.advanceTimersByTime(1)
    expect(written).toEqual(["nack X1"])
  })

  it("closed, it writes nothing it held", () => {
    const { arrive, client, written } = recordingClient()
    const gate = gateReceipts(client, () => {})
    arrive("M1")
    client.socket!.send("receipt M1", () => {})
    gate.close()
    gate.handedOver(["M1"], [])
    expect(written).toEqual([])
  })
})
