import * as http from "node:http"

/**
 * One HTTP request with nothing tidied up, for what `fetch` will not send: any method, path
 * and header, a body with or without `Content-Length` (chunked), in pieces of any size.
 */
export interface RawRequest {
  readonly method: string
  /** Sent as is: percent-encode what must be. */
  readonly path: string
  readonly headers?: Record<string, string>
  readonly body?: Buffer
  /** Send the body chunked instead of with its `Content-Length`. */
  readonly chunked?: boolean
  readonly timeoutMs?: number
}

export interface RawAnswer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  /** The body as text; empty for an event stream (its headers are all we wait for). */
  readonly text: string
}

const PIECE = 64 * 1024

export const rawRequest = (baseUrl: string, request: RawRequest): Promise<RawAnswer> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(baseUrl)
    const headers: Record<string, string> = { ...request.headers }
    const body = request.body
    // Node frames a GET's or DELETE's body only when told how
    if (body !== undefined) headers[request.chunked ? "transfer-encoding" : "content-length"] = request.chunked ? "chunked" : String(body.length)
    let answered = false
    const outgoing = http.request({ host: hostname, port, method: request.method, path: request.path, headers, agent: false }, (response) => {
      answered = true
      if ((response.headers["content-type"] ?? "").startsWith("text/event-stream")) {
        response.destroy()
        return resolve({ status: response.statusCode!, headers: response.headers, text: "" })
      }
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, text: Buffer.concat(chunks).toString("utf8") }))
      response.on("error", reject)
    })
    outgoing.setTimeout(request.timeoutMs ?? 15_000, () => outgoing.destroy(new Error(`no answer within ${request.timeoutMs ?? 15_000} ms`)))
    // An answer may come before the whole body is sent (a 413); the socket closing under the
    // rest of it is then expected.
    outgoing.on("error", (error) => {
      if (!answered) reject(error)
    })
    if (body === undefined) return void outgoing.end()
    let offset = 0
    const write = () => {
      while (offset < body.length) {
        const piece = body.subarray(offset, offset + PIECE)
        offset += piece.length
        if (!outgoing.write(piece)) return void outgoing.once("drain", write)
      }
      outgoing.end()
    }
    write()
  })
