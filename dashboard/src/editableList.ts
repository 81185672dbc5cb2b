import { useRef, useState } from "preact/hooks"

/**
 * A list read from the API that the page itself changes (creates, edits, deletes).
 *
 * A read that started before a change answers with the list as it was, and would undo the
 * change on the page (a webhook just created vanishing from its table). So only the newest
 * read is shown, and a change made while a read is in flight starts a fresh one.
 */
export const useEditableList = <A>(read: () => Promise<ReadonlyArray<A>>, onError: (cause: unknown) => void) => {
  const [items, setItems] = useState<ReadonlyArray<A> | null>(null)
  const reads = useRef(0)
  const reading = useRef(false)
  const latestRead = useRef(read)
  latestRead.current = read

  const load = async () => {
    const mine = ++reads.current
    reading.current = true
    let fresh: ReadonlyArray<A>
    try {
      fresh = await latestRead.current()
    } catch (cause) {
      if (mine !== reads.current) return
      onError(cause)
      fresh = []
    }
    if (mine !== reads.current) return
    reading.current = false
    setItems(fresh)
  }

  const change = (edit: (items: ReadonlyArray<A>) => ReadonlyArray<A>) => {
    setItems((current) => edit(current ?? []))
    if (reading.current) void load()
  }

  return { items, load, change }
}
