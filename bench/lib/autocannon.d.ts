// The part of autocannon's API the benchmarks use (the package ships no types).
declare module "autocannon" {
  interface Options {
    readonly url: string
    readonly method?: string
    readonly headers?: Record<string, string>
    readonly body?: string
    readonly connections?: number
    readonly duration?: number
    readonly timeout?: number
  }
  interface Histogram {
    readonly average: number
    readonly total: number
    readonly p50: number
    readonly p99: number
  }
  interface Result {
    readonly duration: number
    readonly requests: Histogram & { readonly sent: number }
    readonly latency: Histogram
    readonly errors: number
    readonly timeouts: number
    readonly non2xx: number
    readonly statusCodeStats: Record<string, { readonly count: number }>
    readonly "1xx": number
    readonly "2xx": number
    readonly "3xx": number
    readonly "4xx": number
    readonly "5xx": number
  }
  interface Instance extends PromiseLike<Result> {
    on(event: "response", listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): this
    stop(): void
  }
  function autocannon(options: Options): Instance
  export default autocannon
}
