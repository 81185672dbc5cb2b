import { useEffect, useRef, useState } from "preact/hooks"
import { api, type Session, toApiError } from "../api"
import { LiveIndicator, type LiveSession, mergeSession, useSessionEvents } from "../liveSessions"
import { href } from "../router"
import { ErrorBox, Field, StatusBadge, Time, useAction, ConfirmDelete } from "../ui"

type SessionAction = "start" | "stop" | "restart" | "logout"
const actions: ReadonlyArray<{ readonly name: SessionAction; readonly label: string }> = [
  { name: "start", label: "Start" },
  { name: "stop", label: "Stop" },
  { name: "restart", label: "Restart" },
  { name: "logout", label: "Log out" }
]

/** Sessions with their live status; create, start, stop, restart, log out, delete. */
export const Sessions = () => {
  const [rows, setRows] = useState<ReadonlyArray<LiveSession> | null>(null)
  const [name, setName] = useState("")
  const [proxy, setProxy] = useState("")
  const [autoStart, setAutoStart] = useState(false)
  const [confirming, setConfirming] = useState<string | null>(null)
  const { error, setError, busy, run } = useAction()
  const shown = useRef(rows)
  shown.current = rows

  const upsert = (fresh: Session) =>
    setRows((current) => {
      const list = current ?? []
      const known = list.find((row) => row.id === fresh.id)
      return known === undefined ? [...list, fresh] : list.map((row) => (row.id === fresh.id ? mergeSession(row, fresh) : row))
    })

  const load = async () => {
    try {
      const fresh = await api.sessions.list()
      setRows((current) => fresh.map((session) => mergeSession(current?.find((row) => row.id === session.id), session)))
    } catch (cause) {
      setError(toApiError(cause))
    }
  }

  const stream = useSessionEvents({
    onStatus: (sessionId, status, at) => {
      const known = shown.current?.some((row) => row.id === sessionId) ?? false
      setRows((current) => (current ?? []).map((row) => (row.id === sessionId ? { ...row, status, statusAt: at } : row)))
      // A session created elsewhere, or a change that also moves phone/lastError: read it again.
      if (!known || status === "ready" || status === "failed" || status === "logged_out") {
        void api.sessions.get(sessionId).then(upsert, () => undefined)
      }
    },
    onOpen: () => void load()
  })

  useEffect(() => {
    void load()
  }, [])

  // Without the live stream (e.g. a key limited to some sessions), poll instead.
  useEffect(() => {
    if (stream !== "stopped") return undefined
    const timer = window.setInterval(() => void load(), 5000)
    return () => window.clearInterval(timer)
  }, [stream])

  const create = async (event: Event) => {
    event.preventDefault()
    const created = await run("create", () =>
      api.sessions.create({
        name: name.trim(),
        ...(proxy.trim() === "" ? {} : { proxy: { url: proxy.trim() } }),
        ...(autoStart ? { autoStart: true } : {})
      })
    )
    if (created !== undefined) {
      upsert(created)
      setName("")
      setProxy("")
    }
  }

  const act = async (session: Session, action: SessionAction) => {
    const updated = await run(`${action}:${session.id}`, () => api.sessions.action(session.id, action))
    if (updated !== undefined) upsert(updated)
  }

  const remove = async (session: Session) => {
    setConfirming(null)
    const removed = await run(`delete:${session.id}`, async () => {
      await api.sessions.remove(session.id)
      return true
    })
    if (removed) setRows((current) => (current ?? []).filter((row) => row.id !== session.id))
  }

  return (
    <section>
      <div class="page-head">
        <h1>Sessions</h1>
        <LiveIndicator state={stream} />
      </div>
      <ErrorBox error={error} onDismiss={() => setError(null)} />

      <form class="card form-row" onSubmit={(event) => void create(event)}>
        <h2 class="sr-only">New session</h2>
        <Field label="Name">
          <input data-testid="session-name" value={name} required maxLength={64} placeholder="e.g. shop"
            onInput={(event) => setName(event.currentTarget.value)} />
        </Field>
        <Field label="Proxy URL (optional)">
          <input data-testid="session-proxy" value={proxy} placeholder="socks5://user:pass@host:1080"
            onInput={(event) => setProxy(event.currentTarget.value)} />
        </Field>
        <label class="check">
          <input type="checkbox" data-testid="session-autostart" checked={autoStart}
            onChange={(event) => setAutoStart(event.currentTarget.checked)} />
          Start now
        </label>
        <button type="submit" class="primary" data-testid="session-create" disabled={busy === "create"}>
          Create session
        </button>
      </form>

      {rows === null ? (
        <p class="muted">Loading…</p>
      ) : rows.length === 0 ? (
        <p class="muted" data-testid="sessions-empty">No sessions yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="table cards">
            <thead>
              <tr>
                <th>Name</th>
                <th>Status</th>
                <th>Phone</th>
                <th>Last error</th>
                <th>Updated</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((session) => (
                <tr key={session.id} data-testid="session-row" data-session-name={session.name} data-session-id={session.id}>
                  <td data-label="Name">
                    <a href={href("sessions", session.id)} data-testid="session-link">{session.name}</a>
                    <div class="muted small mono">{session.engine}</div>
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={session.status} testId="session-status" />
                  </td>
                  <td data-label="Phone">{session.phone ?? <span class="muted">—</span>}</td>
                  <td data-label="Last error">
                    {session.lastError ? (
                      <span title={session.lastError.message}>
                        <code>{session.lastError.code}</code> {session.lastError.message}
                      </span>
                    ) : (
                      <span class="muted">—</span>
                    )}
                  </td>
                  <td data-label="Updated"><Time iso={session.statusAt ?? session.updatedAt} /></td>
                  <td data-label="Actions">
                    <div class="actions">
                      {actions.map((action) => (
                        <button key={action.name} type="button" data-testid={`session-${action.name}`}
                          disabled={busy !== null && busy.endsWith(session.id)} onClick={() => void act(session, action.name)}>
                          {action.label}
                        </button>
                      ))}
                      <ConfirmDelete
                        testId="session-delete"
                        asking={confirming === session.id}
                        disabled={busy !== null && busy.endsWith(session.id)}
                        question={`Delete “${session.name}” and its data?`}
                        onAsk={() => setConfirming(session.id)}
                        onConfirm={() => void remove(session)}
                        onCancel={() => setConfirming(null)}
                      />
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}
