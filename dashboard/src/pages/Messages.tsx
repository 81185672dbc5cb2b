import { useEffect, useRef, useState } from "preact/hooks"
import { api, type Message, type PageOf } from "../api"
import { MessageContent } from "../MessageContent"
import { useSessionList } from "../sessionList"
import { ErrorBox, Field, Pager, StatusBadge, Time, useAction } from "../ui"

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
  const [page, setPage] = useState(1)
  const [result, setResult] = useState<PageOf<Message> | null>(null)
  const { error, setError, busy, run } = useAction()

  useEffect(() => {
    // Runs after the render that brought the sessions: a session picked meanwhile stays picked.
    if (latestDraft.current.sessionId !== "" || sessions === null || sessions.length === 0) return
    changeDraft({ sessionId: sessions[0]!.id, chatId: "", direction: "" }, true)
  }, [sessions])

  useEffect(() => {
    if (filters === null || filters.sessionId === "") return
    // Filters change faster than pages load: an answer to filters no longer shown is dropped,
    // or a slow first load (the first session, unfiltered) would overwrite the one asked for.
    let current = true
    void run("load", async () => {
      const loaded = await api.messages.page(filters.sessionId, page, LIMIT, {
        chatId: filters.chatId.trim(),
        direction: filters.direction
      })
      if (current) setResult(loaded)
    })
    return () => {
      current = false
    }
  }, [filters, page])

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
            <div class="table-wrap">
              <table class="table cards">
                <thead>
                  <tr>
                    <th>Time</th>
                    <th>Dir.</th>
                    <th>Chat</th>
                    <th>Type</th>
                    <th>Content</th>
                    <th>Status</th>
                  </tr>
                </thead>
                <tbody>
                  {result.items.map((message) => (
                    <tr key={message.id} data-testid="message-row" data-message-id={message.id} data-direction={message.fromMe ? "out" : "in"}>
                      <td data-label="Time"><Time iso={message.timestamp} /></td>
                      <td data-label="Direction">{message.fromMe ? "→ out" : "← in"}</td>
                      <td data-label="Chat" class="mono">{message.chatId}</td>
                      <td data-label="Type">{message.type}</td>
                      <td data-label="Content" class="content-cell">
                        <MessageContent message={message} />
                        {message.reactions.length > 0 && (
                          <span class="reactions"> {message.reactions.map((reaction) => reaction.emoji).join(" ")}</span>
                        )}
                        {message.error && <div class="muted small"><code>{message.error.code}</code> {message.error.message}</div>}
                      </td>
                      <td data-label="Status"><StatusBadge status={message.status} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  )
}
