import { useEffect, useState } from "preact/hooks"
import { api, type Message, type SendResult, toApiError } from "../api"
import { MessageContent } from "../MessageContent"
import { emptyDraft, requestOf, type SendDraft, type SendKind } from "../sendRequests"
import { useSessionList } from "../sessionList"
import { ErrorBox, Field, StatusBadge, Time, useAction } from "../ui"
import { ContactFields, LocationFields, MediaFields, PollFields } from "./TesterFields"

const kinds: ReadonlyArray<[SendKind, string]> = [
  ["text", "Text"], ["image", "Image"], ["video", "Video"], ["audio", "Audio"], ["document", "Document"],
  ["sticker", "Sticker"], ["location", "Location"], ["contact", "Contact card"], ["poll", "Poll"]
]

const POLL_MS = 500
const WATCH_MS = 30_000
const finalStatuses = new Set(["read", "played", "failed"])

/** Sends one message of any kind and follows its status until it is read, fails, or 30 s pass. */
export const Tester = () => {
  const { sessions, error: listError } = useSessionList()
  const [sessionId, setSessionId] = useState("")
  const [draft, setDraft] = useState<SendDraft>(emptyDraft)
  const [sent, setSent] = useState<SendResult | null>(null)
  const [message, setMessage] = useState<Message | null>(null)
  const [watching, setWatching] = useState(false)
  const { error, setError, busy, run } = useAction()

  // A first choice once the list is there; never over one the user made meanwhile (this effect
  // may run after a change made between the list's render and the effect).
  useEffect(() => {
    if (sessions === null || sessions.length === 0) return
    const ready = sessions.find((session) => session.status === "ready") ?? sessions[0]!
    setSessionId((current) => (current !== "" ? current : ready.id))
  }, [sessions])

  // Follow the message sent last: every 500 ms until read/played/failed, or 30 s.
  useEffect(() => {
    if (sent === null) return undefined
    let stopped = false
    const started = Date.now()
    setWatching(true)
    const poll = async () => {
      while (!stopped) {
        try {
          const fresh = await api.messages.get(sessionId, sent.messageId)
          if (stopped) return
          setMessage(fresh)
          if (finalStatuses.has(fresh.status)) break
        } catch (cause) {
          if (!stopped) setError(toApiError(cause))
          break
        }
        if (Date.now() - started >= WATCH_MS) break
        await new Promise((resolve) => window.setTimeout(resolve, POLL_MS))
      }
      if (!stopped) setWatching(false)
    }
    void poll()
    return () => {
      stopped = true
    }
  }, [sent])

  const send = async (event: Event) => {
    event.preventDefault()
    setSent(null)
    setMessage(null)
    const result = await run("send", () => api.messages.send(sessionId, requestOf(draft)))
    if (result !== undefined) setSent(result)
  }

  const change = (patch: Partial<SendDraft>) => setDraft((current) => ({ ...current, ...patch }))
  const { kind } = draft
  const carriesText = kind !== "sticker" && kind !== "location" && kind !== "contact" && kind !== "poll"
  const status = message?.status ?? sent?.status
  const selected = sessions?.find((session) => session.id === sessionId)

  return (
    <section>
      <h1>Message tester</h1>
      <ErrorBox error={error ?? listError} onDismiss={() => setError(null)} />
      <form class="card stack" onSubmit={(event) => void send(event)}>
        <div class="form-row">
          <Field label="Session">
            <select data-testid="tester-session" value={sessionId} required onChange={(event) => setSessionId(event.currentTarget.value)}>
              {sessions === null && <option value="">Loading…</option>}
              {sessions?.length === 0 && <option value="">No sessions</option>}
              {sessions?.map((session) => (
                <option key={session.id} value={session.id}>{session.name}</option>
              ))}
            </select>
          </Field>
          {selected && (
            <p class="field-note">
              <StatusBadge status={selected.status} testId="tester-session-status" />
              {selected.status !== "ready" && selected.status !== "disconnected" && (
                <span class="muted small"> sends need a ready session</span>
              )}
            </p>
          )}
          <Field label="Chat id or phone number">
            <input data-testid="tester-chat" value={draft.chatId} required placeholder="15551234567 or …@g.us"
              onInput={(event) => change({ chatId: event.currentTarget.value })} />
          </Field>
          <Field label="Kind">
            <select data-testid="tester-kind" value={kind} onChange={(event) => change({ kind: event.currentTarget.value as SendKind })}>
              {kinds.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
            </select>
          </Field>
        </div>
        {kind === "location" ? <LocationFields draft={draft} change={change} />
          : kind === "contact" ? <ContactFields draft={draft} change={change} />
          : kind === "poll" ? <PollFields draft={draft} change={change} />
          : kind === "text" ? null
          : <MediaFields kind={kind} draft={draft} change={change} />}
        {carriesText && (
          <Field label={kind === "text" ? "Text" : "Caption (optional)"} wide>
            <textarea data-testid="tester-text" rows={3} value={draft.text} required={kind === "text"}
              onInput={(event) => change({ text: event.currentTarget.value })} />
          </Field>
        )}
        <div class="form-row">
          <Field label="Typing first" narrow>
            <input data-testid="tester-typing" value={draft.typing} placeholder="ms or auto" pattern="auto|[0-9]{1,5}"
              title="milliseconds (0 to 30000), or auto" onInput={(event) => change({ typing: event.currentTarget.value })} />
          </Field>
          {kind === "text" && (
            <label class="check">
              <input type="checkbox" data-testid="tester-link-preview" checked={draft.linkPreview}
                onChange={(event) => change({ linkPreview: event.currentTarget.checked })} />
              Link preview
            </label>
          )}
        </div>
        <div>
          <button type="submit" class="primary" data-testid="tester-send" disabled={busy === "send" || sessionId === ""}>
            {busy === "send" ? "Sending…" : "Send"}
          </button>
        </div>
      </form>

      {sent && (
        <div class="card" data-testid="tester-result" data-message-id={sent.messageId}>
          <h2>Sent message</h2>
          <dl class="facts">
            <dt>Message id</dt><dd class="mono" data-testid="tester-message-id">{sent.messageId}</dd>
            <dt>Chat</dt><dd class="mono">{sent.chatId}</dd>
            <dt>Status</dt>
            <dd>
              <span data-testid="tester-status" data-status={status}>
                <StatusBadge status={status ?? "pending"} />
              </span>{" "}
              {watching ? <span class="muted small">watching…</span> : <span class="muted small">stopped watching</span>}
            </dd>
            {message?.error && (
              <>
                <dt>Error</dt><dd><code>{message.error.code}</code> {message.error.message}</dd>
              </>
            )}
          </dl>
          {message && <MessageContent message={message} />}
          {message && message.statusHistory.length > 0 && (
            <ol class="history" data-testid="tester-history">
              {message.statusHistory.map((change, index) => (
                <li key={index}><StatusBadge status={change.status} /> <Time iso={change.at} /></li>
              ))}
            </ol>
          )}
        </div>
      )}
    </section>
  )
}
