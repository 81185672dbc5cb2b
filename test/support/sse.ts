import { TEST_KEY } from "./gateway.js"

/** Reads Server-Sent Events from `GET /api/events{query}` until `count` frames came (or 5 s passed). */
export const readEvents = async (gateway: { readonly baseUrl: string }, query: string, count: number, lastEventId?: string, key = TEST_KEY) => {
  const controller = new AbortController()
  const headers: Record<string, string> = { "x-api-key": key, ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }) }
  const response = await fetch(`${gateway.baseUrl}/api/events${query}`, { headers, signal: controller.signal })
  const frames: Array<{ id: string; event: string; data: any }> = []
  const timer = setTimeout(() => controller.abort(), 5_000)
  try {
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    let buffer = ""
    while (frames.length < count) {
      const { done, value } = await reader.read()
      if (done) break
      buffer += value
      let end: number
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const fields = Object.fromEntries(frame.split("\n").filter((line) => !line.startsWith(":")).map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]))
        if (fields.id !== undefined) frames.push({ id: fields.id, event: fields.event!, data: JSON.parse(fields.data!) })
      }
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error
  } finally {
    clearTimeout(timer)
    controller.abort()
  }
  return { status: response.status, contentType: response.headers.get("content-type"), frames }
}
