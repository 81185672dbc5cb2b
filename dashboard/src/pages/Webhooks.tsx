import { useEffect, useState } from "preact/hooks"
import { type ApiError, api, type TestResult, toApiError, type Webhook, type WebhookInput } from "../api"
import { useEditableList } from "../editableList"
import { useSessionList } from "../sessionList"
import { ErrorBox, mapLimit, SecretOnce, StatusBadge, Time, useAction, ConfirmDelete } from "../ui"
import { WebhookDeliveries } from "./WebhookDeliveries"
import { WebhookForm } from "./WebhookForm"

/** Webhooks for every session and per session: create, edit, delete, test, deliveries. */
export const Webhooks = () => {
  const { sessions, error: sessionsError } = useSessionList()
  const [listError, setListError] = useState<ApiError | null>(null)
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null)
  const [editing, setEditing] = useState<string | null>(null)
  const [confirming, setConfirming] = useState<string | null>(null)
  const [tested, setTested] = useState<{ webhook: Webhook; result: TestResult } | null>(null)
  const [deliveriesOf, setDeliveriesOf] = useState<string | null>(null)
  const [deliveriesKey, setDeliveriesKey] = useState(0)
  const { error, setError, busy, run } = useAction()

  /** The global list and each session's; a refusal of one (e.g. 403 for a limited key) does not hide the others. */
  const readAll = async () => {
    let refusal: ApiError | null = null
    const lists = await mapLimit([null, ...(sessions ?? []).map((session) => session.id)], 4, async (sessionId) => {
      try {
        return sessionId === null ? await api.webhooks.listGlobal() : await api.webhooks.listForSession(sessionId)
      } catch (cause) {
        refusal ??= toApiError(cause)
        return []
      }
    })
    setListError(refusal)
    return lists.flat()
  }
  const { items: webhooks, load, change } = useEditableList(readAll, (cause) => setListError(toApiError(cause)))

  useEffect(() => {
    if (sessions !== null) void load()
  }, [sessions])

  const sessionName = (id: string | null) =>
    id === null ? "All sessions" : sessions?.find((session) => session.id === id)?.name ?? id

  const create = async (scope: string | null, input: WebhookInput) => {
    const created = await run("create", () => api.webhooks.create(scope, input))
    if (created === undefined) return false
    const { secret: shown, ...webhook } = created
    setSecret({ url: created.url, secret: shown })
    change((webhooks) => [...webhooks, webhook])
    return true
  }

  const update = async (id: string, input: WebhookInput) => {
    const updated = await run(`edit:${id}`, () => api.webhooks.update(id, input))
    if (updated === undefined) return false
    change((webhooks) => webhooks.map((webhook) => (webhook.id === id ? updated : webhook)))
    setEditing(null)
    return true
  }

  const remove = async (webhook: Webhook) => {
    setConfirming(null)
    const done = await run(`delete:${webhook.id}`, async () => {
      await api.webhooks.remove(webhook.id)
      return true
    })
    if (done) {
      change((webhooks) => webhooks.filter((item) => item.id !== webhook.id))
      if (deliveriesOf === webhook.id) setDeliveriesOf(null)
      if (tested?.webhook.id === webhook.id) setTested(null)
    }
  }

  const test = async (webhook: Webhook) => {
    setTested(null)
    const result = await run(`test:${webhook.id}`, () => api.webhooks.test(webhook.id))
    if (result !== undefined) {
      setTested({ webhook, result })
      setDeliveriesKey((key) => key + 1)
    }
  }

  const shownDeliveries = webhooks?.find((webhook) => webhook.id === deliveriesOf)

  return (
    <section>
      <h1>Webhooks</h1>
      <ErrorBox error={error ?? listError ?? sessionsError} onDismiss={() => {
        setError(null)
        setListError(null)
      }} />

      {secret && (
        <SecretOnce label={`Signing secret for ${secret.url}`} value={secret.secret} testId="webhook-secret" onDismiss={() => setSecret(null)} />
      )}

      <div class="card">
        <h2>New webhook</h2>
        <WebhookForm prefix="webhook" initial={null} sessions={sessions ?? []} busy={busy === "create"}
          submitLabel="Create webhook" submitTestId="webhook-create" onSubmit={create} />
      </div>

      {tested && (
        <div class={tested.result.delivered ? "notice ok" : "notice bad"} data-testid="webhook-test-result"
          data-delivered={String(tested.result.delivered)} role="status">
          <strong>Test of {tested.webhook.url}:</strong>{" "}
          {tested.result.delivered ? "delivered" : "not delivered"}
          {tested.result.statusCode !== null && ` — HTTP ${tested.result.statusCode}`}
          {tested.result.error && ` — ${tested.result.error}`} ({tested.result.durationMs} ms)
        </div>
      )}

      {webhooks === null ? (
        <p class="muted">Loading…</p>
      ) : webhooks.length === 0 ? (
        <p class="muted" data-testid="webhooks-empty">No webhooks yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="table cards">
            <thead>
              <tr>
                <th>URL</th>
                <th>Sessions</th>
                <th>Events</th>
                <th>State</th>
                <th>Attempts</th>
                <th>Created</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {webhooks.map((webhook) =>
                editing === webhook.id ? (
                  <tr key={webhook.id} data-testid="webhook-row" data-webhook-id={webhook.id} data-webhook-url={webhook.url}>
                    <td colSpan={7} class="editing">
                      <h3>Edit webhook</h3>
                      <WebhookForm prefix="webhook-edit" initial={webhook} busy={busy === `edit:${webhook.id}`}
                        submitLabel="Save" submitTestId="webhook-save"
                        onSubmit={(_scope, input) => update(webhook.id, input)} onCancel={() => setEditing(null)} />
                    </td>
                  </tr>
                ) : (
                  <tr key={webhook.id} data-testid="webhook-row" data-webhook-id={webhook.id} data-webhook-url={webhook.url}>
                    <td data-label="URL" class="mono break">{webhook.url}</td>
                    <td data-label="Sessions">{sessionName(webhook.sessionId)}</td>
                    <td data-label="Events">{webhook.events.join(", ")}</td>
                    <td data-label="State">
                      <StatusBadge status={webhook.enabled ? "enabled" : "disabled"} testId="webhook-state" />
                      {webhook.disabledReason && <div class="muted small">{webhook.disabledReason}</div>}
                    </td>
                    <td data-label="Attempts">{webhook.maxAttempts}</td>
                    <td data-label="Created"><Time iso={webhook.createdAt} /></td>
                    <td data-label="Actions">
                      <div class="actions">
                        <button type="button" data-testid="webhook-test" disabled={busy === `test:${webhook.id}`} onClick={() => void test(webhook)}>
                          {busy === `test:${webhook.id}` ? "Testing…" : "Test"}
                        </button>
                        <button type="button" data-testid="webhook-show-deliveries" aria-pressed={deliveriesOf === webhook.id}
                          onClick={() => setDeliveriesOf(deliveriesOf === webhook.id ? null : webhook.id)}>
                          Deliveries
                        </button>
                        <button type="button" data-testid="webhook-edit" onClick={() => setEditing(webhook.id)}>Edit</button>
                        <ConfirmDelete
                          testId="webhook-delete"
                          asking={confirming === webhook.id}
                          question="Delete?"
                          onAsk={() => setConfirming(webhook.id)}
                          onConfirm={() => void remove(webhook)}
                          onCancel={() => setConfirming(null)}
                        />
                      </div>
                    </td>
                  </tr>
                )
              )}
            </tbody>
          </table>
        </div>
      )}

      {shownDeliveries && (
        <WebhookDeliveries key={shownDeliveries.id} webhook={shownDeliveries} reloadKey={deliveriesKey} onClose={() => setDeliveriesOf(null)} />
      )}
    </section>
  )
}
