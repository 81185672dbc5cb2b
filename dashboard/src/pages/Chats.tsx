import { useEffect, useState } from "preact/hooks"
import { api, type ChatType } from "../api"
import { ChatList } from "../chats/ChatList"
import { ChatView } from "../chats/ChatView"
import { usePagedList } from "../paging"
import { useSessionChanges } from "../sessionChanges"
import { useSessionList } from "../sessionList"
import { ErrorBox, Field, Pager, useAction } from "../ui"

const LIMIT = 20

interface Filters {
  readonly sessionId: string
  readonly archived: "" | "true" | "false"
  readonly unread: boolean
  readonly type: "" | ChatType
}

const chatTypes: ReadonlyArray<ChatType> = ["person", "group", "channel"]

/** What moves a chat list: its chats' changes, messages in and out, and history the phone sends. */
const chatEvents = ["chat.update", "message.received", "message.sent", "message.ack", "session.history"]

/** A session's chat list, most recent first, filtered and paged; a chat opens below it. */
export const Chats = () => {
  const { sessions, error: listError } = useSessionList()
  const [filters, setFilters] = useState<Filters>({ sessionId: "", archived: "", unread: false, type: "" })
  const [openChatId, setOpenChatId] = useState<string | null>(null)
  const { error, setError, busy, run } = useAction()
  const chats = usePagedList(filters.sessionId === "" ? null : filters, (shown, page) =>
    api.chats.page(shown.sessionId, page, LIMIT, {
      archived: shown.archived,
      unread: shown.unread ? "true" : undefined,
      type: shown.type
    }), run)
  // Messages in and out, reads and the phone's chat changes move the list: read it again.
  const changes = useSessionChanges(filters.sessionId, chatEvents, chats.reload)

  // Built on the latest filters, not those of the last render: two changes may come before one.
  const change = (patch: Partial<Filters>) => {
    chats.setPage(1)
    setFilters((current) => ({ ...current, ...patch }))
    if (patch.sessionId !== undefined) setOpenChatId(null)
  }

  useEffect(() => {
    // After the render that brought the sessions: a session picked meanwhile stays picked.
    if (sessions === null || sessions.length === 0) return
    setFilters((current) => (current.sessionId !== "" ? current : { ...current, sessionId: sessions[0]!.id }))
  }, [sessions])

  return (
    <section>
      <h1>Chats</h1>
      <ErrorBox error={error ?? listError} onDismiss={() => setError(null)} />
      <div class="card form-row">
        <Field label="Session">
          <select data-testid="chats-session" value={filters.sessionId}
            onChange={(event) => change({ sessionId: event.currentTarget.value })}>
            {sessions?.length === 0 && <option value="">No sessions</option>}
            {sessions?.map((session) => <option key={session.id} value={session.id}>{session.name}</option>)}
          </select>
        </Field>
        <Field label="Archived">
          <select data-testid="chats-archived" value={filters.archived}
            onChange={(event) => change({ archived: event.currentTarget.value as Filters["archived"] })}>
            <option value="">All chats</option>
            <option value="false">Not archived</option>
            <option value="true">Archived only</option>
          </select>
        </Field>
        <Field label="Type">
          <select data-testid="chats-type" value={filters.type}
            onChange={(event) => change({ type: event.currentTarget.value as Filters["type"] })}>
            <option value="">Any</option>
            {chatTypes.map((type) => <option key={type} value={type}>{type}</option>)}
          </select>
        </Field>
        <label class="check">
          <input type="checkbox" data-testid="chats-unread" checked={filters.unread}
            onChange={(event) => change({ unread: event.currentTarget.checked })} />
          Unread only
        </label>
      </div>

      {chats.result === null ? (
        <p class="muted">{busy ? "Loading…" : sessions?.length === 0 ? "No sessions yet." : ""}</p>
      ) : (
        <>
          <Pager pagination={chats.result.pagination} prefix="chats" onPage={chats.setPage} />
          {chats.result.items.length === 0
            ? <p class="muted" data-testid="chats-empty">No chats match.</p>
            : <ChatList chats={chats.result.items} openChatId={openChatId} onOpen={setOpenChatId} />}
        </>
      )}

      {openChatId !== null && (
        <ChatView key={`${filters.sessionId} ${openChatId}`} sessionId={filters.sessionId} chatId={openChatId} changes={changes}
          onChanged={chats.reload}
          onDeleted={() => {
            setOpenChatId(null)
            chats.reload()
          }} />
      )}
    </section>
  )
}
