import { useEffect, useState } from "preact/hooks"
import { api, historySyncChoices, type HistorySync, type SessionSettings } from "../api"
import { ErrorBox, Field, useAction } from "../ui"

/** The session's own behaviour: calls, read receipts, presence on connect, history on linking. */
export const SettingsPanel = ({ sessionId }: { sessionId: string }) => {
  const [draft, setDraft] = useState<SessionSettings | null>(null)
  const [saved, setSaved] = useState(false)
  const { error, setError, busy, run } = useAction()

  useEffect(() => {
    void run("load", async () => setDraft(await api.settings.get(sessionId)))
  }, [sessionId])

  const edit = (patch: Partial<SessionSettings>) => {
    setSaved(false)
    setDraft((current) => (current === null ? current : { ...current, ...patch }))
  }

  const save = (event: Event) => {
    event.preventDefault()
    if (draft === null) return
    const message = draft.rejectCallMessage?.trim() ?? ""
    void run("save", async () => {
      setDraft(await api.settings.update(sessionId, { ...draft, rejectCallMessage: message === "" ? null : message }))
      setSaved(true)
    })
  }

  return (
    <div class="card" data-testid="settings-panel">
      <h2>Settings</h2>
      <ErrorBox error={error} onDismiss={() => setError(null)} />
      {draft === null ? (
        <p class="muted">{busy ? "Loading…" : ""}</p>
      ) : (
        <form class="stack" onSubmit={save}>
          <label class="check wrap">
            <input type="checkbox" data-testid="settings-reject-calls" checked={draft.rejectCalls}
              onChange={(event) => edit({ rejectCalls: event.currentTarget.checked })} />
            Reject incoming calls at once
          </label>
          <Field label="Message to the caller when rejecting (optional)" wide>
            <textarea data-testid="settings-reject-message" rows={2} maxLength={4096} disabled={!draft.rejectCalls}
              value={draft.rejectCallMessage ?? ""} onInput={(event) => edit({ rejectCallMessage: event.currentTarget.value })} />
          </Field>
          <label class="check wrap">
            <input type="checkbox" data-testid="settings-read-receipts" checked={draft.readReceipts}
              onChange={(event) => edit({ readReceipts: event.currentTarget.checked })} />
            Send read receipts (blue ticks) when reading through the API
          </label>
          <label class="check wrap">
            <input type="checkbox" data-testid="settings-online" checked={draft.markOnlineOnConnect}
              onChange={(event) => edit({ markOnlineOnConnect: event.currentTarget.checked })} />
            Show the account online when the session connects (from the next connect)
          </label>
          <Field label="History on linking" wide>
            <select data-testid="settings-history-sync" value={draft.historySync}
              onChange={(event) => edit({ historySync: event.currentTarget.value as HistorySync })}>
              {historySyncChoices.map(([choice, label]) => <option key={choice} value={choice}>{label}</option>)}
            </select>
          </Field>
          <div class="actions">
            <button type="submit" class="primary" data-testid="settings-save" disabled={busy !== null}>Save settings</button>
            {saved && <span class="muted" role="status" data-testid="settings-saved">Saved.</span>}
          </div>
        </form>
      )}
    </div>
  )
}
