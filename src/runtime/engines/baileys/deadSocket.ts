import type { WASocket } from "@whiskeysockets/baileys"

/**
 * Dead sockets (issue 21, point 5). Baileys pings WhatsApp every `keepAliveIntervalMs` and ends
 * the socket when nothing came back for a while, but it ends it through the websocket's close
 * handshake: on a server (or a network path) that has gone silent without closing, `ws` waits
 * its 30 s close timeout for an answer that never comes before Baileys reports the close. With
 * Baileys' own 30 s interval a silent socket was noticed only after 65–95 s. The watchdog here
 * does not wait: when nothing at all arrived for two intervals, it cuts the socket (no close
 * frame), and the session reconnects on its usual schedule.
 */

/**
 * What a cut socket is closed with: Baileys' own "connection lost" (408), which the actor
 * retries. Counted as a network failure, so a session showing a QR does not take it for the
 * QR running out (Baileys' other 408).
 */
export class DeadSocket extends Error {
  readonly output = { statusCode: 408 }
  constructor(silentMs: number) {
    super(`no answer from WhatsApp for ${Math.round(silentMs / 1000)} s (keep-alive pings unanswered); the socket was cut`)
    this.name = "DeadSocket"
  }
}

/** The `ws` WebSocket inside Baileys' `WebSocketClient` (rc14 keeps it as `socket`, null once closed). */
const rawSocketOf = (sock: WASocket) => (sock.ws as unknown as { readonly socket: { terminate(): void } | null }).socket

/** Cuts the socket's TCP connection now, without a close frame; nothing when it is closed already. */
export const terminateSocket = (sock: WASocket): void => rawSocketOf(sock)?.terminate()

/**
 * Watches a socket from its creation: whatever the server sends (pong, stanza, handshake)
 * counts as an answer. Returns the function that stops watching.
 */
export const watchForSilence = (sock: WASocket, keepAliveIntervalMs: number): (() => void) => {
  const deadline = 2 * keepAliveIntervalMs
  let lastReceived = Date.now()
  const onMessage = () => {
    lastReceived = Date.now()
  }
  sock.ws.on("message", onMessage)
  let timer: ReturnType<typeof setTimeout> | undefined
  let stopped = false
  const arm = (delay: number) => {
    timer = setTimeout(check, delay)
    timer.unref()
  }
  const check = () => {
    const silent = Date.now() - lastReceived
    if (silent < deadline) return arm(deadline - silent)
    // Once more after the pending I/O: a process that was itself stalled (a long GC, a busy
    // loop) may have data waiting that the timer fired ahead of.
    setImmediate(() => {
      if (stopped) return
      const stillSilent = Date.now() - lastReceived
      if (stillSilent < deadline) return arm(deadline - stillSilent)
      cut(sock, new DeadSocket(stillSilent))
    })
  }
  arm(deadline)
  return () => {
    stopped = true
    clearTimeout(timer)
    sock.ws.off("message", onMessage)
  }
}

/**
 * Baileys' `end` with our reason (a no-op when Baileys is already ending the socket, its own
 * reason then stands), then the socket terminated, which `end` was waiting on: Baileys
 * reports the close at once instead of after the close handshake's timeout.
 */
const cut = (sock: WASocket, reason: DeadSocket) => {
  const raw = rawSocketOf(sock)
  void sock.end(reason).catch(() => undefined)
  // The socket as it was before `end` (which forgets it once closed).
  raw?.terminate()
}
