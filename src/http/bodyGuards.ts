import { Transform, type TransformCallback } from "node:stream"

/**
 * Bodies the parsers and formatters under @effect/platform cannot take, caught before they get
 * them. JSON nested thousands deep parses, but a schema refusing it overflows the stack while
 * quoting it. The multipart parser (multipasta) never finishes a file part whose body ends
 * before the closing delimiter: the request would hang until the client leaves.
 */

/** Far deeper than any request of the API; shallow enough for any formatter. */
export const MAX_JSON_DEPTH = 100

/** Whether a parsed JSON value nests more than `MAX_JSON_DEPTH` deep (counted without recursion). */
export const isTooDeep = (value: unknown): boolean => {
  const pending: Array<readonly [unknown, number]> = [[value, 1]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [current, depth] = next
    if (typeof current !== "object" || current === null) continue
    if (depth > MAX_JSON_DEPTH) return true
    for (const child of Object.values(current)) pending.push([child, depth + 1])
  }
  return false
}

// The parser's own reading of a Content-Type (RFC 7231 §3.1.1.1), so we agree on the boundary.
const mediaType = /^[!#$%&'*+.^\w|~-]+\/[!#$%&'*+.^\w|~-]+$/u
const parameter = /; *([!#$%&'*+.^\w`|~-]+)=("(?:[\v\u0020\u0021\u0023-\u005b\u005d-\u007e\u0080-\u00ff]|\\[\v\u0020-\u00ff])*"|[!#$%&'*+.^\w`|~-]+) */gu
const quotedPair = /\\([\v\u0020-\u00ff])/gu

/** The `boundary` of a multipart Content-Type; undefined when the parser would find none. */
export const boundaryOf = (contentType: string | undefined): string | undefined => {
  if (contentType === undefined) return undefined
  let index = contentType.indexOf(";")
  if (index === -1 || !mediaType.test(contentType.slice(0, index).trim())) return undefined
  let boundary: string | undefined
  const parameters = new RegExp(parameter)
  parameters.lastIndex = index
  for (let match = parameters.exec(contentType); match !== null && match.index === index; match = parameters.exec(contentType)) {
    index += match[0].length
    const value = match[2]!
    if (match[1]!.toLowerCase() === "boundary") boundary = value.startsWith("\"") ? value.slice(1, -1).replace(quotedPair, "$1") : value
  }
  return index === contentType.length ? boundary : undefined
}

/** What ends a multipart body, as the parser recognises it: a line break, `--boundary--`. */
const closeDelimiter = (boundary: string) => Buffer.from(`\r\n--${boundary}--`)

/** Whether a whole body held in memory reaches its closing delimiter. */
export const isClosed = (body: Buffer, boundary: string) => body.includes(closeDelimiter(boundary))

/**
 * Passes a streamed body through, watching for its closing delimiter; a body that ends without
 * one gets it, so the parser finishes. `sawClose` then says whether the client sent it.
 */
export class ClosingGuard extends Transform {
  sawClose = false
  private readonly delimiter: Buffer
  private tail = Buffer.alloc(0)

  constructor(boundary: string) {
    super()
    this.delimiter = closeDelimiter(boundary)
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
    if (!this.sawClose) {
      // the delimiter may straddle two chunks: look at the end of the last one too
      const edge = Buffer.concat([this.tail, chunk.subarray(0, this.delimiter.length)])
      this.sawClose = chunk.includes(this.delimiter) || edge.includes(this.delimiter)
      const last = chunk.length >= this.delimiter.length ? chunk : Buffer.concat([this.tail, chunk])
      this.tail = Buffer.from(last.subarray(-this.delimiter.length))
    }
    callback(null, chunk)
  }

  override _flush(callback: TransformCallback) {
    if (!this.sawClose) this.push(Buffer.concat([this.delimiter, Buffer.from("\r\n")]))
    callback()
  }
}
