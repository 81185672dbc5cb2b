import { TEST_KEY } from "./gateway.js"

/** A stored event as the live events stream replays it. */
export interface OutboxEvent {
  readonly id: string
  readonly event: string
  readonly sessionId: string | null
  readonly timestamp: string
  readonly data: any
}

/**
 * Every event in the outbox (what the webhook must deliver), read back through the live events
 * stream resumed from before the first event: it replays the stored events in order, then goes
 * live; we stop at the first event newer than the call (or when nothing more comes).
 */
export const outboxEvents = async (gateway: { readonly baseUrl: string }): Promise<Array<OutboxEvent>> => {
  const asOf = Date.now()
  const controller = new AbortController()
  const response = await fetch(`${gateway.baseUrl}/api/events`, {
    headers: { "x-api-key": TEST_KEY, "last-event-id": "00000000-0000-0000-0000-000000000000" },
    signal: controller.signal
  })
  if (response.status !== 200) throw new Error(`events: ${response.status} ${await response.text()}`)
  const frames: Array<OutboxEvent> = []
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ""
  try {
    reading: while (Date.now() - asOf < 20_000) {
      let idle: NodeJS.Timeout | undefined
      const chunk = await Promise.race([
        reader.read(),
        new Promise<"idle">((resolve) => (idle = setTimeout(() => resolve("idle"), 1_500)))
      ])
      clearTimeout(idle)
      if (chunk === "idle" || chunk.done) break
      buffer += chunk.value
      let end: number
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const data = frame.split("\n").find((line) => line.startsWith("data: "))
        if (data === undefined) continue
        const event = JSON.parse(data.slice("data: ".length))
        // Replayed in order, then live: an event from after the call means the replay is over.
        if (Date.parse(event.timestamp) > asOf) break reading
        frames.push({ id: event.id, event: event.event, sessionId: event.sessionId, timestamp: event.timestamp, data: event.data })
      }
    }
  } finally {
    controller.abort()
    await reader.cancel().catch(() => undefined)
  }
  return frames
}
