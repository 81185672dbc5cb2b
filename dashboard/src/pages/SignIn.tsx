import { useState } from "preact/hooks"
import { type ApiError, api, getApiBase, toApiError } from "../api"
import { ErrorBox } from "../ui"

/** Sign in with an API key, checked with `GET /api/sessions?limit=1` before it is kept. */
export const SignIn = ({ reason, onSignedIn }: { reason: ApiError | null; onSignedIn: (key: string) => void }) => {
  const [key, setKey] = useState("")
  const [error, setError] = useState<ApiError | null>(null)
  const [busy, setBusy] = useState(false)

  const submit = async (event: Event) => {
    event.preventDefault()
    const value = key.trim()
    if (value === "") return
    setBusy(true)
    setError(null)
    try {
      await api.checkKey(value)
      onSignedIn(value)
    } catch (cause) {
      setError(toApiError(cause))
    } finally {
      setBusy(false)
    }
  }

  return (
    <main class="signin">
      <form class="card signin-card" onSubmit={(event) => void submit(event)}>
        <h1>Sign in to Switchboard</h1>
        <p class="muted">Sign in with an API key. It is kept in this tab only, and forgotten when you close it.</p>
        <ErrorBox error={error ?? reason} />
        <label class="field field-wide">
          <span>API key</span>
          <input
            type="password"
            name="apiKey"
            autoComplete="off"
            spellcheck={false}
            placeholder="sb_…"
            data-testid="api-key"
            value={key}
            onInput={(event) => setKey(event.currentTarget.value)}
            required
          />
        </label>
        <button type="submit" class="primary" data-testid="sign-in" disabled={busy}>
          {busy ? "Checking…" : "Sign in"}
        </button>
        <p class="muted small">API: {getApiBase()}/api</p>
      </form>
    </main>
  )
}
