import { useEffect, useState } from "preact/hooks"
import { api, type Session, sessionStatuses } from "../api"
import { href } from "../router"
import { ErrorBox, mapLimit, StatusBadge, useAction } from "../ui"

interface Counts {
  readonly in: number
  readonly out: number
}

/** Local midnight today, as the ISO instant the API's `since` takes. */
const startOfToday = () => {
  const now = new Date()
  return new Date(now.getFullYear(), now.getMonth(), now.getDate()).toISOString()
}

/** Messages of one session since `since` in one direction: the `total` of a one-item page. */
const countMessages = async (sessionId: string, direction: "in" | "out", since: string) =>
  (await api.messages.page(sessionId, 1, 1, { since, direction })).pagination.total

export const Overview = () => {
  const [sessions, setSessions] = useState<ReadonlyArray<Session> | null>(null)
  const [counts, setCounts] = useState<Counts | null>(null)
  const [updatedAt, setUpdatedAt] = useState<Date | null>(null)
  const { error, busy, run } = useAction()

  const load = () =>
    run("load", async () => {
      const list = await api.sessions.list()
      setSessions(list)
      const since = startOfToday()
      const perSession = await mapLimit(list, 4, async (session) => {
        const [incoming, outgoing] = await Promise.all([
          countMessages(session.id, "in", since),
          countMessages(session.id, "out", since)
        ])
        return { in: incoming, out: outgoing }
      })
      setCounts(perSession.reduce((sum, one) => ({ in: sum.in + one.in, out: sum.out + one.out }), { in: 0, out: 0 }))
      setUpdatedAt(new Date())
    })

  useEffect(() => {
    void load()
  }, [])

  const byStatus = new Map<string, number>()
  for (const session of sessions ?? []) byStatus.set(session.status, (byStatus.get(session.status) ?? 0) + 1)

  return (
    <section>
      <div class="page-head">
        <h1>Overview</h1>
        <button type="button" data-testid="overview-refresh" disabled={busy !== null} onClick={() => void load()}>
          {busy ? "Loading…" : "Refresh"}
        </button>
      </div>
      <ErrorBox error={error} />
      <div class="tiles">
        <div class="card" data-testid="overview-sessions" data-total={sessions?.length ?? ""}>
          <h2>Sessions</h2>
          <p class="big">{sessions === null ? "…" : sessions.length}</p>
          <ul class="status-counts">
            {sessionStatuses
              .filter((status) => byStatus.has(status))
              .map((status) => (
                <li key={status} data-testid={`overview-status-${status}`} data-count={byStatus.get(status)}>
                  <StatusBadge status={status} /> <strong>{byStatus.get(status)}</strong>
                </li>
              ))}
          </ul>
          {sessions !== null && sessions.length === 0 && (
            <p class="muted">
              No sessions yet. <a href={href("sessions")}>Create one</a>.
            </p>
          )}
        </div>
        <div class="card" data-testid="overview-messages" data-in={counts?.in ?? ""} data-out={counts?.out ?? ""}>
          <h2>Messages today</h2>
          <div class="split">
            <div>
              <p class="big" data-testid="overview-messages-in">{counts === null ? "…" : counts.in}</p>
              <p class="muted">received</p>
            </div>
            <div>
              <p class="big" data-testid="overview-messages-out">{counts === null ? "…" : counts.out}</p>
              <p class="muted">sent</p>
            </div>
          </div>
          <p class="muted small">Since local midnight, over all sessions this key can see.</p>
        </div>
      </div>
      {updatedAt && <p class="muted small">Updated {updatedAt.toLocaleTimeString()}</p>}
    </section>
  )
}
