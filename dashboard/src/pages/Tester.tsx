import { useEffect, useState } from "preact/hooks"
import { api, type MediaKind, type Message, type SendResult, toApiError } from "../api"
import { useSessionList } from "../sessionList"
import { ErrorBox, Field, StatusBadge, Time, useAction } from "../ui"

type Kind = "text" | MediaKind

const POLL_MS = 500
const WATCH_MS = 30_000
const finalStatuses = new Set(["read", "played", "failed"])

/** Sends one message (text or a file) and follows its status until it is read, fails, or 30 s pass. */
export const Tester = () => {
  const { sessions, error: listError } = useSessionList()
  const [sessionId, setSessionId] = useState("")
  const [chatId, setChatId] = useState("")
  const [kind, setKind] = useState<Kind>("text")
  const [text, setText] = useState("")
  const [file, setFile] = useState<File | null>(null)
  const [ptt, setPtt] = useState(false)
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
    const result = await run("send", () => {
      if (kind === "text") return api.messages.sendText(sessionId, chatId.trim(), text)
      if (file === null) throw new Error("choose a file to send")
      const form = new FormData()
      form.set("chatId", chatId.trim())
      if (text.trim() !== "") form.set("caption", text)
      if (kind === "audio" && ptt) form.set("ptt", "true")
      form.set("file", file, file.name)
      return api.messages.sendMedia(sessionId, kind, form)
    })
    if (result !== undefined) setSent(result)
  }

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
            <input data-testid="tester-chat" value={chatId} required placeholder="15551234567 or …@g.us"
              onInput={(event) => setChatId(event.currentTarget.value)} />
          </Field>
          <Field label="Kind">
            <select data-testid="tester-kind" value={kind} onChange={(event) => setKind(event.currentTarget.value as Kind)}>
              <option value="text">Text</option>
              <option value="image">Image</option>
              <option value="video">Video</option>
              <option value="audio">Audio</option>
              <option value="document">Document</option>
            </select>
          </Field>
        </div>
        {kind !== "text" && (
          <div class="form-row">
            <Field label="File" wide>
              <input type="file" data-testid="tester-file" required
                accept={kind === "image" ? "image/jpeg,image/png,image/webp" : kind === "video" ? "video/mp4,video/3gpp" : kind === "audio" ? "audio/*" : undefined}
                onChange={(event) => setFile(event.currentTarget.files?.[0] ?? null)} />
            </Field>
            {kind === "audio" && (
              <label class="check">
                <input type="checkbox" data-testid="tester-ptt" checked={ptt} onChange={(event) => setPtt(event.currentTarget.checked)} />
                Voice note
              </label>
            )}
          </div>
        )}
        <Field label={kind === "text" ? "Text" : "Caption (optional)"} wide>
          <textarea data-testid="tester-text" rows={3} value={text} required={kind === "text"}
            onInput={(event) => setText(event.currentTarget.value)} />
        </Field>
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
