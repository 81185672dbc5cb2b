/** Small async helpers for tests that drive many requests at once. */

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs `task` over `items`, at most `limit` at a time; results in input order. */
export const mapLimit = async <A, B>(items: ReadonlyArray<A>, limit: number, task: (item: A, index: number) => Promise<B>): Promise<Array<B>> => {
  const results: Array<B> = new Array(items.length)
  let next = 0
  let failed = false
  const worker = async () => {
    // A failed task stops the others from taking more: a failed test leaves nothing running.
    while (next < items.length && !failed) {
      const index = next++
      try {
        results[index] = await task(items[index]!, index)
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
