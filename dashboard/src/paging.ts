import { useEffect, useState } from "preact/hooks"
import type { PageOf } from "./api"
import type { useAction } from "./ui"

type Run = ReturnType<typeof useAction>["run"]

/**
 * One page of a list for the filters shown (`null`: nothing to show yet), read again when the
 * filters or the page change, or on `reload()`. Filters change faster than pages load: an answer
 * to filters no longer shown is dropped, or a slow first load would overwrite the one asked for.
 */
export const usePagedList = <Filters, Item>(
  filters: Filters | null,
  load: (filters: Filters, page: number) => Promise<PageOf<Item>>,
  run: Run
) => {
  const [page, setPage] = useState(1)
  const [result, setResult] = useState<PageOf<Item> | null>(null)
  const [reloads, setReloads] = useState(0)

  useEffect(() => {
    if (filters === null) return
    let current = true
    void run("load", async () => {
      const loaded = await load(filters, page)
      if (current) setResult(loaded)
    })
    return () => {
      current = false
    }
  }, [filters, page, reloads])

  return { page, setPage, result, setResult, reload: () => setReloads((count) => count + 1) }
}
