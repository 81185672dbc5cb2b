import type { BinaryNode } from "@whiskeysockets/baileys"
import type { EngineEvent } from "../../Engine.js"
import { isIgnoredJid } from "./jids.js"

/**
 * Holds back what Baileys writes to the socket after a message arrives until the session has
 * stored that message (issue 21, point 1). rc14 sends a message's delivery receipt before it
 * emits the message (`messages-recv.js`: `sendReceipt`, then `upsertMessage`), and WhatsApp
 * keeps a message for a device only until that receipt: a gateway killed between the receipt
 * and the store lost the message for good. Held, the receipt never leaves a process that dies
 * first, so the server (the loopback peer too) delivers the message again on the next login.
 *
 * The frames are noise-encrypted in order (each with the next counter), so a receipt cannot be
 * picked out and held alone: a frame written once a message has arrived waits, with everything
 * after it, until every message that arrived before it is stored (or proved to need nothing:
 * an upsert the engine makes no events of, or `HOLD_LIMIT_MS` gone by, so that a message
 * Baileys drops without an upsert never stalls the socket). Frames written while nothing is
 * owed go at once. Baileys is told a held frame was written, so nothing in it waits.
 *
 * One exception: a query Baileys waits the answer to while a message has not reached the
 * session yet. Baileys may need that answer before it emits the message at all (rc14 emits an
 * upsert only after processing it, e.g. an app-state key share from the account's phone
 * resyncs app state first), and a held query is never answered: the socket would stall until
 * `HOLD_LIMIT_MS`. So such a query goes at once, with what was held before it (its receipts
 * included: for those messages the window is open again until they are stored). Once every
 * owed message has reached the session, nothing Baileys does waits for a query's answer, and
 * a query (the keep-alive ping, say) waits with the rest. A query is a frame written right
 * after Baileys began waiting for an answer (`waitForMessage` listens for `TAG:<id>` on its
 * client, then sends).
 */

/** How long a message that never reached the session may hold the socket's frames back. */
export const HOLD_LIMIT_MS = 10_000

/** The `ws` socket under Baileys' WebSocketClient, as far as the gate touches it. */
interface RawSocket {
  send(data: unknown, callback?: (error?: Error) => void): void
}

/** Baileys' socket client: its `ws` socket, and the emitter of decoded stanzas. */
export interface GatedClient {
  readonly socket: RawSocket | null
  prependListener(event: string, listener: (node: BinaryNode) => void): unknown
  off(event: string, listener: (node: BinaryNode) => void): unknown
  eventNames(): Array<string | symbol>
}

/** The answers Baileys is waiting for: one `TAG:<id>` listener per query in flight. */
const awaitedAnswers = (client: GatedClient) =>
  new Set(client.eventNames().filter((name): name is string => typeof name === "string" && name.startsWith("TAG:")))

export interface ReceiptGate {
  /**
   * The events the engine made of an upsert of these messages: the messages count as stored
   * once the session acknowledged every one of them; at once when there are none.
   */
  readonly handedOver: (messageIds: ReadonlyArray<string>, events: ReadonlyArray<EngineEvent>) => void
  /** The session stored these events (see `EngineConnection.acknowledge`). */
  readonly acknowledged: (events: ReadonlyArray<EngineEvent>) => void
  /** The connection is over: its timers go; what is held is never written. */
  readonly close: () => void
}

interface Upsert {
  readonly messageIds: ReadonlyArray<string>
  remaining: number
}

export const gateReceipts = (client: GatedClient, onWriteError: (error: Error) => void): ReceiptGate => {
  const socket = client.socket
  if (socket === null) throw new Error("baileys: the socket is not open yet")
  const write = socket.send.bind(socket)
  /** Messages arrived and not yet stored, by arrival number (a Map keeps insertion order). */
  const owed = new Map<number, { readonly id: string; readonly timer: ReturnType<typeof setTimeout>; reachedSession: boolean }>()
  let arrivals = 0
  /** Frames held back, in order; each may go once every message that arrived before it is settled. */
  const held: Array<{ readonly data: unknown; readonly after: number }> = []
  const upserts = new WeakMap<EngineEvent, Upsert>()
  let closed = false

  const oldestOwed = () => {
    for (const seq of owed.keys()) return seq
    return Number.POSITIVE_INFINITY
  }
  const written = (error?: Error) => {
    if (error !== undefined) onWriteError(error)
  }
  const flush = () => {
    const oldest = oldestOwed()
    let ready = 0
    while (ready < held.length && held[ready]!.after <= oldest) ready++
    if (closed) return
    for (const { data } of held.splice(0, ready)) write(data, written)
  }
  const settle = (seq: number) => {
    const entry = owed.get(seq)
    if (entry === undefined) return
    clearTimeout(entry.timer)
    owed.delete(seq)
    flush()
  }
  const settleMessages = (ids: ReadonlyArray<string>) => {
    const settled = new Set(ids)
    for (const [seq, { id, timer }] of owed) {
      if (settled.has(id)) {
        clearTimeout(timer)
        owed.delete(seq)
      }
    }
    flush()
  }

  /** The answers awaited when the last frame was written: one awaited since then marks a query. */
  let awaited = awaitedAnswers(client)
  const isQuery = () => {
    const now = awaitedAnswers(client)
    const fresh = [...now].some((tag) => !awaited.has(tag))
    awaited = now
    return fresh
  }

  socket.send = (data, callback) => {
    const query = isQuery()
    if (held.length === 0 && oldestOwed() >= arrivals) return write(data, callback)
    if (query && [...owed.values()].some((message) => !message.reachedSession)) {
      if (!closed) for (const { data: before } of held.splice(0)) write(before, written)
      return write(data, callback)
    }
    held.push({ data, after: arrivals })
    callback?.()
  }
  // Before Baileys' own listener, so a message is owed before anything it causes is written.
  const onMessage = (node: BinaryNode) => {
    const id = node.attrs["id"]
    const from = node.attrs["from"]
    // Baileys acks and drops these itself, without an upsert (`processNode`).
    if (id === undefined || (from !== undefined && isIgnoredJid(from))) return
    const seq = arrivals++
    owed.set(seq, { id, timer: setTimeout(() => settle(seq), HOLD_LIMIT_MS).unref(), reachedSession: false })
  }
  client.prependListener("CB:message", onMessage)

  return {
    handedOver: (messageIds, events) => {
      if (messageIds.length === 0) return
      if (events.length === 0) return settleMessages(messageIds)
      const reached = new Set(messageIds)
      for (const message of owed.values()) if (reached.has(message.id)) message.reachedSession = true
      const upsert: Upsert = { messageIds, remaining: events.length }
      for (const event of events) upserts.set(event, upsert)
    },
    acknowledged: (events) => {
      for (const event of events) {
        const upsert = upserts.get(event)
        if (upsert === undefined) continue
        upserts.delete(event)
        if (--upsert.remaining === 0) settleMessages(upsert.messageIds)
      }
    },
    close: () => {
      closed = true
      client.off("CB:message", onMessage)
      for (const { timer } of owed.values()) clearTimeout(timer)
      owed.clear()
      held.length = 0
    }
  }
}
