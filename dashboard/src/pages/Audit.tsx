import { useEffect, useState } from "preact/hooks"
import { api, type AuditRecord, type PageOf } from "../api"
import { ErrorBox, Field, Pager, StatusBadge, Time, useAction } from "../ui"

const LIMIT = 25

interface Filters {
  readonly outcome: "" | "success" | "denied" | "failure"
  readonly action: string
}

/** The audit log (admin): every change and every refused request, newest first. */
export const Audit = () => {
  const [draft, setDraft] = useState<Filters>({ outcome: "", action: "" })
  const [filters, setFilters] = useState<Filters>(draft)
  const [page, setPage] = useState(1)
  const [result, setResult] = useState<PageOf<AuditRecord> | null>(null)
  const { error, setError, busy, run } = useAction()

  const load = () =>
    run("load", async () => setResult(await api.audit.page(page, LIMIT, { outcome: filters.outcome, action: filters.action.trim() })))

  useEffect(() => {
    void load()
  }, [filters, page])

  const apply = (next: Filters) => {
    setPage(1)
    setFilters(next)
  }

  return (
    <section>
      <div class="page-head">
        <h1>Audit log</h1>
        <button type="button" data-testid="audit-refresh" disabled={busy !== null} onClick={() => void load()}>Refresh</button>
      </div>
      <ErrorBox error={error} onDismiss={() => setError(null)} />
      <form class="card form-row" onSubmit={(event) => {
        event.preventDefault()
        apply({ ...draft })
      }}>
        <Field label="Outcome">
          <select data-testid="audit-outcome" value={draft.outcome}
            onChange={(event) => {
              const next = { ...draft, outcome: event.currentTarget.value as Filters["outcome"] }
              setDraft(next)
              apply(next)
            }}>
            <option value="">All</option>
            <option value="success">success</option>
            <option value="denied">denied</option>
            <option value="failure">failure</option>
          </select>
        </Field>
        <Field label="Action">
          <input data-testid="audit-action" value={draft.action} placeholder="e.g. sessions.start"
            onInput={(event) => setDraft({ ...draft, action: event.currentTarget.value })} />
        </Field>
        <button type="submit" data-testid="audit-search" disabled={busy !== null}>Filter</button>
      </form>

      {result === null ? (
        <p class="muted">{busy ? "Loading…" : ""}</p>
      ) : (
        <>
          <Pager pagination={result.pagination} prefix="audit" onPage={setPage} />
          {result.items.length === 0 ? (
            <p class="muted" data-testid="audit-empty">No records match.</p>
          ) : (
            <div class="table-wrap">
              <table class="table cards">
                <thead>
                  <tr>
                    <th>Time</th>
                    <th>Key</th>
                    <th>Address</th>
                    <th>Action</th>
                    <th>Target</th>
                    <th>Outcome</th>
                    <th>Status</th>
                    <th>Code</th>
                  </tr>
                </thead>
                <tbody>
                  {result.items.map((record) => (
                    <tr key={record.id} data-testid="audit-row" data-outcome={record.outcome} data-action={record.action}>
                      <td data-label="Time"><Time iso={record.at} /></td>
                      <td data-label="Key">{record.keyName ?? <span class="muted">{record.keyId ?? "none"}</span>}</td>
                      <td data-label="Address" class="mono">{record.clientIp}</td>
                      <td data-label="Action"><code>{record.action}</code></td>
                      <td data-label="Target" class="mono break">{record.method} {record.target}</td>
                      <td data-label="Outcome"><StatusBadge status={record.outcome} /></td>
                      <td data-label="Status">{record.status}</td>
                      <td data-label="Code">{record.code ?? <span class="muted">—</span>}</td>
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
