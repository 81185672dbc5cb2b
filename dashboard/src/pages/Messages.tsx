import { useEffect, useRef, useState } from "preact/hooks"
import { api } from "../api"
import { MessageTable } from "../MessageTable"
import { usePagedList } from "../paging"
import { useSessionList } from "../sessionList"
import { ErrorBox, Field, Pager, useAction } from "../ui"

const LIMIT = 20

interface Filters {
  readonly sessionId: string
  readonly chatId: string
  readonly direction: "" | "in" | "out"
}

/** Message history of a session, filtered by chat and direction, a page at a time. */
export const Messages = () => {
  const { sessions, error: listError } = useSessionList()
  const [draft, setDraft] = useState<Filters>({ sessionId: "", chatId: "", direction: "" })
  const [filters, setFilters] = useState<Filters | null>(null)
  // The draft as last changed: two changes in a row (session, then direction) may come before a
  // render, and the second must build on the first, not on the draft of the last render.
  const latestDraft = useRef(draft)
  const changeDraft = (patch: Partial<Filters>, apply: boolean) => {
    const next = { ...latestDraft.current, ...patch }
    latestDraft.current = next
    setDraft(next)
    if (apply) {
      setPage(1)
      setFilters(next)
    }
  }
  const { error, setError, busy, run } = useAction()
  const { setPage, result } = usePagedList(filters?.sessionId ? filters : null, (shown, page) =>
    api.messages.page(shown.sessionId, page, LIMIT, { chatId: shown.chatId.trim(), direction: shown.direction }), run)

  useEffect(() => {
    // Runs after the render that brought the sessions: a session picked meanwhile stays picked.
    if (latestDraft.current.sessionId !== "" || sessions === null || sessions.length === 0) return
    changeDraft({ sessionId: sessions[0]!.id, chatId: "", direction: "" }, true)
  }, [sessions])

  const apply = (event: Event) => {
    event.preventDefault()
    setPage(1)
    setFilters({ ...latestDraft.current })
  }

  return (
    <section>
      <h1>Messages</h1>
      <ErrorBox error={error ?? listError} onDismiss={() => setError(null)} />
      <form class="card form-row" onSubmit={apply}>
        <Field label="Session">
          <select data-testid="messages-session" value={draft.sessionId}
            onChange={(event) => changeDraft({ sessionId: event.currentTarget.value }, true)}>
            {sessions?.length === 0 && <option value="">No sessions</option>}
            {sessions?.map((session) => <option key={session.id} value={session.id}>{session.name}</option>)}
          </select>
        </Field>
        <Field label="Chat id">
          <input data-testid="messages-chat" value={draft.chatId} placeholder="all chats"
            onInput={(event) => changeDraft({ chatId: event.currentTarget.value }, false)} />
        </Field>
        <Field label="Direction">
          <select data-testid="messages-direction" value={draft.direction}
            onChange={(event) => changeDraft({ direction: event.currentTarget.value as Filters["direction"] }, true)}>
            <option value="">Both</option>
            <option value="in">Received</option>
            <option value="out">Sent</option>
          </select>
        </Field>
        <button type="submit" data-testid="messages-search" disabled={busy !== null}>Search</button>
      </form>

      {result === null ? (
        <p class="muted">{busy ? "Loading…" : sessions?.length === 0 ? "No sessions yet." : ""}</p>
      ) : (
        <>
          <Pager pagination={result.pagination} prefix="messages" onPage={setPage} />
          {result.items.length === 0 ? (
            <p class="muted" data-testid="messages-empty">No messages match.</p>
          ) : (
            <MessageTable messages={result.items} />
          )}
        </>
      )}
    </section>
  )
}
