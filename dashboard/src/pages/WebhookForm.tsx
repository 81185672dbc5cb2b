import { useState } from "preact/hooks"
import { type EventKind, eventKinds, type Session, type Webhook, type WebhookInput } from "../api"
import { Field } from "../ui"

interface HeaderRow {
  readonly name: string
  readonly value: string
}

/**
 * The fields of a webhook, for creating one (`prefix` "webhook", with a scope) or editing one
 * (`prefix` "webhook-edit"). Header values are never shown back, so an edit sends headers only
 * when asked to replace them.
 */
export const WebhookForm = ({
  prefix,
  initial,
  sessions,
  busy,
  submitLabel,
  submitTestId,
  onSubmit,
  onCancel
}: {
  prefix: string
  initial: Webhook | null
  /** Given on create: the scope picker (null = every session). */
  sessions?: ReadonlyArray<Session>
  busy: boolean
  submitLabel: string
  submitTestId: string
  onSubmit: (scope: string | null, input: WebhookInput) => Promise<boolean>
  onCancel?: () => void
}) => {
  const [url, setUrl] = useState(initial?.url ?? "")
  const [allEvents, setAllEvents] = useState(initial === null || initial.events.includes("*"))
  const [events, setEvents] = useState<ReadonlyArray<string>>(initial?.events.filter((kind) => kind !== "*") ?? [])
  const [scope, setScope] = useState("")
  const [maxAttempts, setMaxAttempts] = useState(String(initial?.maxAttempts ?? 8))
  const [enabled, setEnabled] = useState(initial?.enabled ?? true)
  const [replaceHeaders, setReplaceHeaders] = useState(initial === null)
  const [headers, setHeaders] = useState<ReadonlyArray<HeaderRow>>([])

  const submit = async (event: Event) => {
    event.preventDefault()
    const named = headers.filter((header) => header.name.trim() !== "")
    const input: WebhookInput = {
      url: url.trim(),
      // Kinds the server named: the picker's options, or the webhook as the server listed it.
      events: allEvents ? ["*"] : (events as ReadonlyArray<EventKind>),
      enabled,
      ...(maxAttempts.trim() === "" ? {} : { maxAttempts: Number(maxAttempts) }),
      ...(replaceHeaders && (initial !== null || named.length > 0)
        ? { headers: Object.fromEntries(named.map((header) => [header.name.trim(), header.value])) }
        : {})
    }
    const done = await onSubmit(scope === "" ? null : scope, input)
    if (done && initial === null) {
      setUrl("")
      setHeaders([])
    }
  }

  const setHeader = (index: number, change: Partial<HeaderRow>) =>
    setHeaders(headers.map((header, at) => (at === index ? { ...header, ...change } : header)))

  return (
    <form class="stack" onSubmit={(event) => void submit(event)}>
      <div class="form-row">
        <Field label="URL" wide>
          <input data-testid={`${prefix}-url`} type="url" value={url} required placeholder="https://example.com/hooks/whatsapp"
            onInput={(event) => setUrl(event.currentTarget.value)} />
        </Field>
        {sessions !== undefined && (
          <Field label="Sessions">
            <select data-testid={`${prefix}-session`} value={scope} onChange={(event) => setScope(event.currentTarget.value)}>
              <option value="">All sessions</option>
              {sessions.map((session) => <option key={session.id} value={session.id}>{session.name}</option>)}
            </select>
          </Field>
        )}
        <Field label="Max attempts" narrow>
          <input data-testid={`${prefix}-max-attempts`} type="number" min={1} max={20} value={maxAttempts}
            onInput={(event) => setMaxAttempts(event.currentTarget.value)} />
        </Field>
        <label class="check">
          <input type="checkbox" data-testid={`${prefix}-enabled`} checked={enabled} onChange={(event) => setEnabled(event.currentTarget.checked)} />
          Enabled
        </label>
      </div>

      <fieldset>
        <legend>Events</legend>
        <label class="check">
          <input type="checkbox" data-testid={`${prefix}-all-events`} checked={allEvents}
            onChange={(event) => setAllEvents(event.currentTarget.checked)} />
          All events (<code>*</code>)
        </label>
        {!allEvents && (
          <select multiple size={7} data-testid={`${prefix}-events`} class="multi" required
            onChange={(event) => setEvents(Array.from(event.currentTarget.selectedOptions, (option) => option.value))}>
            {eventKinds.map((kind) => <option key={kind} value={kind} selected={events.includes(kind)}>{kind}</option>)}
          </select>
        )}
      </fieldset>

      <fieldset>
        <legend>Headers sent with each delivery</legend>
        {initial !== null && (
          <>
            <p class="muted small">
              Now: {Object.keys(initial.headers).length === 0 ? "none" : Object.keys(initial.headers).join(", ")} (values are never shown).
            </p>
            <label class="check">
              <input type="checkbox" data-testid={`${prefix}-replace-headers`} checked={replaceHeaders}
                onChange={(event) => setReplaceHeaders(event.currentTarget.checked)} />
              Replace the headers with these
            </label>
          </>
        )}
        {replaceHeaders && (
          <>
            {headers.map((header, index) => (
              <div class="form-row" key={index}>
                <input aria-label="Header name" data-testid={`${prefix}-header-name`} placeholder="Authorization" value={header.name}
                  onInput={(event) => setHeader(index, { name: event.currentTarget.value })} />
                <input aria-label="Header value" data-testid={`${prefix}-header-value`} placeholder="Bearer …" value={header.value}
                  onInput={(event) => setHeader(index, { value: event.currentTarget.value })} />
                <button type="button" data-testid={`${prefix}-header-remove`} onClick={() => setHeaders(headers.filter((_, at) => at !== index))}>
                  Remove
                </button>
              </div>
            ))}
            <button type="button" data-testid={`${prefix}-header-add`} onClick={() => setHeaders([...headers, { name: "", value: "" }])}>
              Add header
            </button>
          </>
        )}
      </fieldset>

      <div class="actions">
        <button type="submit" class="primary" data-testid={submitTestId} disabled={busy}>{submitLabel}</button>
        {onCancel && <button type="button" data-testid={`${prefix}-cancel`} onClick={onCancel}>Cancel</button>}
      </div>
    </form>
  )
}
