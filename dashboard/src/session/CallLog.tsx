import { useMemo } from "preact/hooks"
import { api, type Call } from "../api"
import { usePagedList } from "../paging"
import { useSessionChanges } from "../sessionChanges"
import { PagedTable } from "../PagedTable"
import { ErrorBox, StatusBadge, Time, useAction } from "../ui"

const LIMIT = 10

const callEvents = ["call.received", "call.update"]

/** The session's calls, newest first, a page at a time; a ringing one can be rejected. Follows the live stream. */
export const CallLog = ({ sessionId }: { sessionId: string }) => {
  const loading = useAction()
  const actions = useAction()
  const changes = useSessionChanges(sessionId, callEvents)
  const shown = useMemo(() => ({ sessionId, changes }), [sessionId, changes])
  const calls = usePagedList(shown, (current, page) => api.calls.page(current.sessionId, page, LIMIT), loading.run)

  const reject = (call: Call) =>
    void actions.run(call.callId, async () => {
      await api.calls.reject(sessionId, call.callId)
      calls.reload()
    })

  return (
    <div class="card" data-testid="call-log">
      <h2>Calls</h2>
      <ErrorBox error={actions.error ?? loading.error} onDismiss={() => {
        actions.setError(null)
        loading.setError(null)
      }} />
      <PagedTable result={calls.result} waiting={loading.busy ? "Loading…" : ""} empty="No calls yet." prefix="calls"
        onPage={calls.setPage} columns={["Time", "From", "Kind", "Status", ""]}
        row={(call) => (
          <tr key={call.callId} data-testid="call-row" data-call-id={call.callId} data-status={call.status}>
            <td data-label="Time"><Time iso={call.at} /></td>
            <td data-label="From" class="mono break">{call.from}</td>
            <td data-label="Kind">{call.isVideo ? "video" : "voice"}{call.isGroup ? ", group" : ""}</td>
            <td data-label="Status"><StatusBadge status={call.status} testId="call-status" /></td>
            <td>
              {call.status === "offer" && (
                <button type="button" class="danger" data-testid="call-reject" disabled={actions.busy !== null}
                  onClick={() => reject(call)}>
                  Reject
                </button>
              )}
            </td>
          </tr>
        )} />
    </div>
  )
}
