import { useEffect, useState } from "preact/hooks"
import { api, type Me, type QrCode, toApiError } from "../api"
import { LiveIndicator, type LiveSession, mergeSession, useSessionEvents } from "../liveSessions"
import { href } from "../router"
import { CallLog } from "../session/CallLog"
import { ProfilePanel } from "../session/ProfilePanel"
import { SettingsPanel } from "../session/SettingsPanel"
import { ErrorBox, Field, StatusBadge, Time, useAction } from "../ui"

type SessionAction = "start" | "stop" | "restart" | "logout"
const actions: ReadonlyArray<{ readonly name: SessionAction; readonly label: string }> = [
  { name: "start", label: "Start" },
  { name: "stop", label: "Stop" },
  { name: "restart", label: "Restart" },
  { name: "logout", label: "Log out" }
]

const QR_POLL_MS = 2000

/**
 * One session: live status, the QR while it waits to be linked, pairing code, proxy, and `me`;
 * then its profile, settings and call log.
 */
export const SessionDetail = ({ sessionId }: { sessionId: string }) => {
  const [session, setSession] = useState<LiveSession | null>(null)
  const [qr, setQr] = useState<QrCode | null>(null)
  const [qrTick, setQrTick] = useState(0)
  const [me, setMe] = useState<Me | null>(null)
  const [phone, setPhone] = useState("")
  const [pairingCode, setPairingCode] = useState<string | null>(null)
  const [proxyUrl, setProxyUrl] = useState("")
  const { error, setError, busy, run } = useAction()

  const load = async () => {
    try {
      const fresh = await api.sessions.get(sessionId)
      setSession((known) => mergeSession(known ?? undefined, fresh))
    } catch (cause) {
      setError(toApiError(cause))
    }
  }

  const stream = useSessionEvents({
    sessionId,
    withQr: true,
    onStatus: (_id, status, at) => {
      setSession((known) => (known === null ? known : { ...known, status, statusAt: at }))
      if (status === "ready" || status === "failed" || status === "logged_out") void load()
    },
    onQr: () => setQrTick((tick) => tick + 1),
    onOpen: () => void load()
  })

  useEffect(() => {
    void load()
  }, [sessionId])

  useEffect(() => {
    if (stream !== "stopped") return undefined
    const timer = window.setInterval(() => void load(), 3000)
    return () => window.clearInterval(timer)
  }, [stream])

  const status = session?.status

  // The QR, while the session waits for it to be scanned: read now, on each session.qr event,
  // and every 2 s (it rotates), until the status moves on.
  useEffect(() => {
    if (status !== "qr_ready") {
      setQr(null)
      return undefined
    }
    let stopped = false
    const read = async () => {
      try {
        const fresh = await api.sessions.qr(sessionId)
        if (!stopped) setQr((known) => (known?.qr === fresh.qr ? known : fresh))
      } catch (cause) {
        const refusal = toApiError(cause)
        if (stopped) return
        // 409: no longer qr_ready; the status event (or this read) says what it is now.
        if (refusal.statusCode === 409) void load()
        else {
          setError(refusal)
          stopped = true
        }
      }
    }
    void read()
    const timer = window.setInterval(() => {
      if (!stopped) void read()
    }, QR_POLL_MS)
    return () => {
      stopped = true
      window.clearInterval(timer)
    }
  }, [status, sessionId, qrTick])

  useEffect(() => {
    if (status !== "ready") {
      setMe(null)
      return
    }
    api.sessions.me(sessionId).then(setMe, () => setMe(null))
  }, [status, sessionId])

  useEffect(() => {
    if (status === "ready") setPairingCode(null)
  }, [status])

  const act = async (action: SessionAction) => {
    const updated = await run(action, () => api.sessions.action(sessionId, action))
    if (updated !== undefined) setSession((known) => mergeSession(known ?? undefined, updated))
  }

  const requestCode = async (event: Event) => {
    event.preventDefault()
    const answer = await run("pairing", () => api.sessions.pairingCode(sessionId, phone.replace(/[^\d]/g, "")))
    if (answer !== undefined) setPairingCode(answer.code)
  }

  const saveProxy = async (url: string | null) => {
    const answer = await run("proxy", () => api.sessions.setProxy(sessionId, url))
    if (answer !== undefined) {
      setSession((known) => (known === null ? known : { ...known, proxy: answer }))
      setProxyUrl("")
    }
  }

  if (session === null) {
    return (
      <section>
        <p><a href={href("sessions")}>‹ Sessions</a></p>
        <h1>Session</h1>
        <ErrorBox error={error} />
        {error === null && <p class="muted">Loading…</p>}
      </section>
    )
  }

  return (
    <section data-testid="session-detail" data-session-id={session.id} data-session-name={session.name}>
      <p><a href={href("sessions")} data-testid="back-to-sessions">‹ Sessions</a></p>
      <div class="page-head">
        <h1>{session.name}</h1>
        <StatusBadge status={session.status} testId="session-status" />
        <LiveIndicator state={stream} />
      </div>
      <ErrorBox error={error} onDismiss={() => setError(null)} />

      <div class="actions card">
        {actions.map((action) => (
          <button key={action.name} type="button" data-testid={`session-${action.name}`} disabled={busy !== null}
            onClick={() => void act(action.name)}>
            {action.label}
          </button>
        ))}
      </div>

      <div class="grid-2">
        <div class="card">
          <h2>Details</h2>
          <dl class="facts">
            <dt>Id</dt><dd class="mono">{session.id}</dd>
            <dt>Engine</dt><dd>{session.engine}</dd>
            <dt>Phone</dt><dd>{session.phone ?? "—"}</dd>
            <dt>Name on WhatsApp</dt><dd>{session.pushName ?? "—"}</dd>
            <dt>Created</dt><dd><Time iso={session.createdAt} /></dd>
            <dt>Updated</dt><dd><Time iso={session.statusAt ?? session.updatedAt} /></dd>
            <dt>Waiting to send</dt><dd data-testid="session-backlog">{session.outbound ? `${session.outbound.backlog}${session.outbound.max === null ? "" : ` of at most ${session.outbound.max}`}` : "—"}</dd>
            <dt>Last error</dt>
            <dd data-testid="session-last-error">
              {session.lastError ? <><code>{session.lastError.code}</code> {session.lastError.message}</> : "—"}
            </dd>
          </dl>
          {me && (
            <div data-testid="session-me">
              <h3>Linked account</h3>
              <dl class="facts">
                <dt>Id</dt><dd class="mono">{me.id}</dd>
                <dt>Phone</dt><dd data-testid="me-phone">{me.phone}</dd>
                <dt>LID</dt><dd class="mono">{me.lid ?? "—"}</dd>
                <dt>Push name</dt><dd>{me.pushName ?? "—"}</dd>
              </dl>
            </div>
          )}
        </div>

        <div class="card" data-testid="qr-section">
          <h2>Link a phone</h2>
          {session.status === "qr_ready" ? (
            qr ? (
              <figure class="qr">
                <img data-testid="qr-image" src={qr.image} alt="QR code to scan with WhatsApp" width={264} height={264} data-qr={qr.qr} />
                <figcaption class="muted small">
                  In WhatsApp: Linked devices › Link a device. Refreshes by itself; this one expires <Time iso={qr.expiresAt} />.
                </figcaption>
              </figure>
            ) : (
              <p class="muted">Reading the QR…</p>
            )
          ) : session.status === "ready" ? (
            <p>Linked{session.phone ? ` to ${session.phone}` : ""}.</p>
          ) : (
            <p class="muted">
              The QR appears here while the session is waiting to be linked (status “qr ready”). Start the session to get one.
            </p>
          )}
          {session.status !== "ready" && (
            <form class="form-row" onSubmit={(event) => void requestCode(event)}>
              <Field label="Or link with a code: phone number">
                <input data-testid="pairing-phone" inputMode="tel" placeholder="15551234567" value={phone} required
                  onInput={(event) => setPhone(event.currentTarget.value)} />
              </Field>
              <button type="submit" data-testid="pairing-submit" disabled={busy === "pairing"}>Get pairing code</button>
            </form>
          )}
          {pairingCode && (
            <p class="pairing">
              Enter this code on the phone: <strong data-testid="pairing-code">{pairingCode}</strong>
            </p>
          )}
        </div>
      </div>

      <div class="card">
        <h2>Proxy</h2>
        <p>
          Current: <span data-testid="proxy-current">{session.proxy?.url ?? "none (direct connection)"}</span>
        </p>
        <form class="form-row" onSubmit={(event) => {
          event.preventDefault()
          void saveProxy(proxyUrl.trim())
        }}>
          <Field label="New proxy URL" wide>
            <input data-testid="proxy-url" placeholder="http://host:3128 or socks5://user:pass@host:1080" value={proxyUrl} required
              onInput={(event) => setProxyUrl(event.currentTarget.value)} />
          </Field>
          <button type="submit" data-testid="proxy-save" disabled={busy === "proxy"}>Set proxy</button>
          <button type="button" data-testid="proxy-clear" disabled={busy === "proxy" || session.proxy === null}
            onClick={() => void saveProxy(null)}>
            Clear proxy
          </button>
        </form>
        <p class="muted small">Used from the next connect (restart the session to apply it now).</p>
      </div>

      <div class="grid-2">
        <ProfilePanel sessionId={session.id} phone={session.phone} ready={session.status === "ready"} />
        <SettingsPanel sessionId={session.id} />
      </div>
      <CallLog sessionId={session.id} />
    </section>
  )
}

