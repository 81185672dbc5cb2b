/**
 * The HTTP load of the send-text benchmarks: autocannon from this process, BENCH_CONNECTIONS
 * keep-alive connections POSTing the same JSON body for a number of seconds, and what came back.
 */
import autocannon from "autocannon"

export interface LoadOptions {
  readonly url: string
  readonly body: string
  readonly headers?: Record<string, string>
  readonly connections: number
  readonly seconds: number
  /** Called for every response, e.g. to count accepted messages per time window. */
  readonly onResponse?: (statusCode: number) => void
}

export interface LoadResult {
  readonly seconds: number
  /** 2xx answered per second of load: for a send, messages accepted per second. */
  readonly okPerSecond: number
  /** Latency percentiles over all responses, ms. */
  readonly p50: number
  readonly p99: number
  readonly ok: number
  /** Responses by status code, e.g. { "201": 1234, "429": 5 }. */
  readonly statusCodes: Record<string, number>
  /** Connection errors, timeouts included. */
  readonly errors: number
  readonly timeouts: number
  /**
   * Written but never answered because autocannon closed the sockets at the end (at most one per
   * connection): the server may or may not have handled them.
   */
  readonly cutOff: number
}

export const runLoad = async (options: LoadOptions): Promise<LoadResult> => {
  const instance = autocannon({
    url: options.url,
    method: "POST",
    headers: { "content-type": "application/json", ...options.headers },
    body: options.body,
    connections: options.connections,
    duration: options.seconds,
    timeout: 30 // s: a slow answer is a figure (p99), only a hang is a broken run
  })
  const { onResponse } = options
  if (onResponse !== undefined) instance.on("response", (_client, statusCode) => onResponse(statusCode))
  const result = await instance
  const answered = result["1xx"] + result["2xx"] + result["3xx"] + result["4xx"] + result["5xx"]
  const statusCodes: Record<string, number> = {}
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count
  return {
    seconds: result.duration,
    okPerSecond: result["2xx"] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result["2xx"],
    statusCodes,
    errors: result.errors,
    timeouts: result.timeouts,
    cutOff: Math.max(0, result.requests.sent - answered)
  }
}

/** What is wrong with a load's answers, beyond refusals the caller expects (e.g. 429): [] when nothing. */
export const loadProblems = (name: string, result: LoadResult, expectedRefusals: ReadonlyArray<number> = []): Array<string> => {
  const problems: Array<string> = []
  const unexpected = Object.entries(result.statusCodes)
    .filter(([code]) => !(code.startsWith("2") || expectedRefusals.includes(Number(code))))
  if (unexpected.length > 0) problems.push(`${name}: unexpected answers ${unexpected.map(([code, n]) => `${n}× HTTP ${code}`).join(", ")}`)
  if (result.errors > 0) problems.push(`${name}: ${result.errors} connection errors (${result.timeouts} timeouts)`)
  if (result.ok === 0) problems.push(`${name}: no successful request at all`)
  return problems
}
