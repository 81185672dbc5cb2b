import { useEffect, useState } from "preact/hooks"
import { type ApiKey, api, type CreatedApiKey, type Role, toApiError } from "../api"
import { useEditableList } from "../editableList"
import { ErrorBox, Field, SecretOnce, splitList, StatusBadge, Time, useAction, ConfirmDelete } from "../ui"

/** API keys (admin): list, create (the key is shown once), revoke, delete. */
export const Keys = () => {
  const [name, setName] = useState("")
  const [role, setRole] = useState<Role>("operator")
  const [allowedSessions, setAllowedSessions] = useState("")
  const [allowedIps, setAllowedIps] = useState("")
  const [expiresAt, setExpiresAt] = useState("")
  const [created, setCreated] = useState<CreatedApiKey | null>(null)
  const [confirming, setConfirming] = useState<string | null>(null)
  const { error, setError, busy, run } = useAction()

  const { items: keys, load, change } = useEditableList(() => api.keys.list(), (cause) => setError(toApiError(cause)))

  useEffect(() => {
    void load()
  }, [])

  const replace = (key: ApiKey) => change((keys) => keys.map((item) => (item.id === key.id ? key : item)))

  const create = async (event: Event) => {
    event.preventDefault()
    const sessions = splitList(allowedSessions)
    const ips = splitList(allowedIps)
    const key = await run("create", () =>
      api.keys.create({
        name: name.trim(),
        role,
        ...(sessions.length > 0 ? { allowedSessions: sessions } : {}),
        ...(ips.length > 0 ? { allowedIps: ips } : {}),
        // datetime-local is local time: send the instant it means.
        ...(expiresAt !== "" ? { expiresAt: new Date(expiresAt).toISOString() } : {})
      })
    )
    if (key !== undefined) {
      setCreated(key)
      const { key: _shown, ...listed } = key
      change((keys) => [...keys, listed])
      setName("")
      setAllowedSessions("")
      setAllowedIps("")
      setExpiresAt("")
    }
  }

  const revoke = async (key: ApiKey) => {
    const revoked = await run(`revoke:${key.id}`, () => api.keys.revoke(key.id))
    if (revoked !== undefined) replace(revoked)
  }

  const remove = async (key: ApiKey) => {
    setConfirming(null)
    const done = await run(`delete:${key.id}`, async () => {
      await api.keys.remove(key.id)
      return true
    })
    if (done) change((keys) => keys.filter((item) => item.id !== key.id))
  }

  return (
    <section>
      <h1>API keys</h1>
      <ErrorBox error={error} onDismiss={() => setError(null)} />

      {created && (
        <SecretOnce label={`New key “${created.name}” (${created.role})`} value={created.key} testId="new-key" onDismiss={() => setCreated(null)} />
      )}

      <form class="card stack" onSubmit={(event) => void create(event)}>
        <h2>New key</h2>
        <div class="form-row">
          <Field label="Name">
            <input data-testid="key-name" value={name} required maxLength={100} placeholder="shop backend"
              onInput={(event) => setName(event.currentTarget.value)} />
          </Field>
          <Field label="Role">
            <select data-testid="key-role" value={role} onChange={(event) => setRole(event.currentTarget.value as Role)}>
              <option value="viewer">viewer — reads</option>
              <option value="operator">operator — also runs sessions, sends, webhooks</option>
              <option value="admin">admin — everything</option>
            </select>
          </Field>
          <Field label="Expires (optional)">
            <input type="datetime-local" data-testid="key-expires" value={expiresAt} onInput={(event) => setExpiresAt(event.currentTarget.value)} />
          </Field>
        </div>
        <div class="form-row">
          <Field label="Allowed sessions (ids or names, comma-separated; empty = all)" wide>
            <input data-testid="key-sessions" value={allowedSessions} placeholder="shop, support"
              onInput={(event) => setAllowedSessions(event.currentTarget.value)} />
          </Field>
          <Field label="Allowed addresses (IPs or CIDRs; empty = anywhere)" wide>
            <input data-testid="key-ips" value={allowedIps} placeholder="10.20.0.0/16, 2001:db8::/32"
              onInput={(event) => setAllowedIps(event.currentTarget.value)} />
          </Field>
        </div>
        <div>
          <button type="submit" class="primary" data-testid="key-create" disabled={busy === "create"}>Create key</button>
        </div>
      </form>

      {keys === null ? (
        <p class="muted">Loading…</p>
      ) : keys.length === 0 ? (
        <p class="muted">No keys to show.</p>
      ) : (
        <div class="table-wrap">
          <table class="table cards">
            <thead>
              <tr>
                <th>Name</th>
                <th>Role</th>
                <th>Prefix</th>
                <th>Status</th>
                <th>Sessions</th>
                <th>Addresses</th>
                <th>Expires</th>
                <th>Last used</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr key={key.id} data-testid="key-row" data-key-name={key.name} data-key-id={key.id}>
                  <td data-label="Name">{key.name}</td>
                  <td data-label="Role" data-testid="key-role-cell">{key.role}</td>
                  <td data-label="Prefix" class="mono">{key.prefix ?? "—"}</td>
                  <td data-label="Status"><StatusBadge status={key.status} testId="key-status" /></td>
                  <td data-label="Sessions">{key.allowedSessions?.join(", ") ?? <span class="muted">all</span>}</td>
                  <td data-label="Addresses" class="mono">{key.allowedIps?.join(", ") ?? <span class="muted">any</span>}</td>
                  <td data-label="Expires">{key.expiresAt ? <Time iso={key.expiresAt} /> : <span class="muted">never</span>}</td>
                  <td data-label="Last used">{key.lastUsedAt ? <Time iso={key.lastUsedAt} /> : <span class="muted">never</span>}</td>
                  <td data-label="Actions">
                    <div class="actions">
                      <button type="button" data-testid="key-revoke" disabled={key.status === "revoked" || busy === `revoke:${key.id}`}
                        onClick={() => void revoke(key)}>
                        Revoke
                      </button>
                      <ConfirmDelete
                        testId="key-delete"
                        asking={confirming === key.id}
                        question="Delete?"
                        onAsk={() => setConfirming(key.id)}
                        onConfirm={() => void remove(key)}
                        onCancel={() => setConfirming(null)}
                      />
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}
