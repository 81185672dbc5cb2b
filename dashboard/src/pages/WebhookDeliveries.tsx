import { useEffect, useState } from "preact/hooks"
import { api, type Delivery, type PageOf, type Webhook } from "../api"
import { PagedTable } from "../PagedTable"
import { ErrorBox, StatusBadge, Time, useAction } from "../ui"

const LIMIT = 20

/** A webhook's deliveries, newest first, each with its attempts and a redeliver button. */
export const WebhookDeliveries = ({ webhook, reloadKey, onClose }: { webhook: Webhook; reloadKey: number; onClose: () => void }) => {
  const [page, setPage] = useState(1)
  const [result, setResult] = useState<PageOf<Delivery> | null>(null)
  const { error, setError, busy, run } = useAction()

  const load = () => run("load", async () => setResult(await api.webhooks.deliveries(webhook.id, page, LIMIT)))

  useEffect(() => {
    void load()
  }, [webhook.id, page, reloadKey])

  const redeliver = async (delivery: Delivery) => {
    const fresh = await run(`redeliver:${delivery.id}`, () => api.webhooks.redeliver(delivery.id))
    if (fresh !== undefined && result !== null) {
      setResult({ ...result, items: result.items.map((item) => (item.id === fresh.id ? fresh : item)) })
      // It is queued again: read the list once more shortly, to show how it went.
      window.setTimeout(() => void load(), 1500)
    }
  }

  return (
    <div class="card" data-testid="webhook-deliveries" data-webhook-id={webhook.id}>
      <div class="page-head">
        <h2>Deliveries to <span class="mono break">{webhook.url}</span></h2>
        <div class="actions">
          <button type="button" data-testid="deliveries-refresh" disabled={busy !== null} onClick={() => void load()}>Refresh</button>
          <button type="button" data-testid="deliveries-close" onClick={onClose}>Close</button>
        </div>
      </div>
      <ErrorBox error={error} onDismiss={() => setError(null)} />
      <PagedTable result={result} waiting="Loading…" empty="No deliveries yet." prefix="deliveries" onPage={setPage}
        columns={["Created", "Event", "Status", "Attempts", "Last answer", "Next attempt", ""]}
        row={(delivery) => (
          <tr key={delivery.id} data-testid="delivery-row" data-delivery-id={delivery.id} data-status={delivery.status}>
            <td data-label="Created"><Time iso={delivery.createdAt} /></td>
            <td data-label="Event"><code>{delivery.event}</code></td>
            <td data-label="Status"><StatusBadge status={delivery.status} testId="delivery-status" /></td>
            <td data-label="Attempts">
              {delivery.attemptLog.length === 0 ? (
                delivery.attempts
              ) : (
                <details>
                  <summary data-testid="delivery-attempts">{delivery.attempts}</summary>
                  <ol class="attempts">
                    {delivery.attemptLog.map((attempt) => (
                      <li key={attempt.attempt}>
                        #{attempt.attempt} <Time iso={attempt.at} /> —{" "}
                        {attempt.statusCode !== null ? `HTTP ${attempt.statusCode}` : attempt.error ?? "no answer"}
                        {attempt.statusCode !== null && attempt.error ? ` (${attempt.error})` : ""}, {attempt.durationMs} ms
                      </li>
                    ))}
                  </ol>
                </details>
              )}
            </td>
            <td data-label="Last answer">
              {delivery.lastStatusCode !== null ? `HTTP ${delivery.lastStatusCode}` : ""}
              {delivery.lastError ? <div class="muted small">{delivery.lastError}</div> : delivery.lastStatusCode === null ? "—" : ""}
            </td>
            <td data-label="Next attempt"><Time iso={delivery.nextAttemptAt} /></td>
            <td data-label="">
              <button type="button" data-testid="delivery-redeliver" disabled={busy === `redeliver:${delivery.id}`}
                onClick={() => void redeliver(delivery)}>
                Redeliver
              </button>
            </td>
          </tr>
        )} />
    </div>
  )
}
