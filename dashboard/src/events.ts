import { ApiError, authHeaders, type DomainEvent, errorOf, reportUnauthorized, urlOf } from "./api"

/**
 * The live event stream (`GET /api/events`, Server-Sent Events). EventSource cannot send the
 * `X-API-Key` header, so the stream is read with fetch: frames are split on blank lines,
 * `id:`/`event:`/`data:` fields parsed, and after a drop the stream is opened again with
 * `Last-Event-ID`, so the events missed meanwhile are replayed by the gateway.
 */

export type StreamState = "connecting" | "live" | "reconnecting" | "stopped"

export interface SubscribeOptions {
  readonly sessionId?: string
  readonly events?: ReadonlyArray<string>
  readonly onEvent: (event: DomainEvent) => void
  /** Each time the stream is (re)opened: a good moment to re-read what may have changed. */
  readonly onOpen?: () => void
  readonly onState?: (state: StreamState) => void
  /** A refusal other than 401 (which signs out): e.g. 403 for a key limited to some sessions. */
  readonly onError?: (error: ApiError) => void
}

interface Frame {
  id?: string
  event?: string
  data: Array<string>
  retry?: number
}

const parseFrame = (block: string): Frame => {
  const frame: Frame = { data: [] }
  for (const line of block.split(/\r\n|\r|\n/)) {
    if (line === "" || line.startsWith(":")) continue
    const colon = line.indexOf(":")
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? "" : line.slice(colon + 1)
    if (value.startsWith(" ")) value = value.slice(1)
    if (field === "id") frame.id = value
    else if (field === "event") frame.event = value
    else if (field === "data") frame.data.push(value)
    else if (field === "retry" && /^\d+$/.test(value)) frame.retry = Number(value)
  }
  return frame
}

const FRAME_END = /\r\n\r\n|\n\n|\r\r/

/** Opens the stream and keeps it open until the returned function is called. */
export const subscribeEvents = (options: SubscribeOptions): (() => void) => {
  const controller = new AbortController()
  let lastEventId: string | undefined
  let delay = 1000
  let stopped = false

  const setState = (state: StreamState) => {
    if (!controller.signal.aborted) options.onState?.(state)
  }

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = window.setTimeout(resolve, ms)
      controller.signal.addEventListener("abort", () => {
        window.clearTimeout(timer)
        resolve()
      }, { once: true })
    })

  const readOnce = async () => {
    const headers: Record<string, string> = { accept: "text/event-stream", ...authHeaders() }
    if (lastEventId !== undefined) headers["Last-Event-ID"] = lastEventId
    const query = {
      sessionId: options.sessionId,
      events: options.events === undefined ? undefined : options.events.join(",")
    }
    const response = await fetch(urlOf("/events", query), {
      headers,
      signal: controller.signal,
      mode: "cors",
      credentials: "omit",
      cache: "no-store"
    })
    if (!response.ok || response.body === null) {
      const error = await errorOf(response)
      if (response.status === 401) {
        stopped = true
        reportUnauthorized(error)
      } else {
        options.onError?.(error)
        // A role or session refusal will not pass by itself.
        if (response.status === 403 || response.status === 400) stopped = true
      }
      return
    }
    setState("live")
    delay = 1000
    options.onOpen?.()
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
    let buffer = ""
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      buffer += value
      let match: RegExpExecArray | null
      while ((match = FRAME_END.exec(buffer)) !== null) {
        const block = buffer.slice(0, match.index)
        buffer = buffer.slice(match.index + match[0].length)
        const frame = parseFrame(block)
        if (frame.retry !== undefined) delay = frame.retry
        if (frame.id !== undefined) lastEventId = frame.id
        if (frame.data.length === 0) continue
        try {
          options.onEvent(JSON.parse(frame.data.join("\n")) as DomainEvent)
        } catch {
          // A frame that is not JSON is not one of ours: skip it.
        }
      }
    }
  }

  const run = async () => {
    setState("connecting")
    while (!stopped && !controller.signal.aborted) {
      try {
        await readOnce()
      } catch {
        // A network error or a dropped stream: try again below, unless stopped.
      }
      if (stopped || controller.signal.aborted) break
      setState("reconnecting")
      await wait(delay)
      delay = Math.min(delay * 2, 15_000)
    }
    setState("stopped")
  }
  void run()

  return () => {
    stopped = true
    controller.abort()
  }
}
