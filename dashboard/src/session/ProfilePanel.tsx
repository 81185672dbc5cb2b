import { useEffect, useState } from "preact/hooks"
import { api, type Profile } from "../api"
import { useApiImage } from "../apiImage"
import { ErrorBox, Field, useAction } from "../ui"

/**
 * The session's own WhatsApp profile: the name others see, the about text, the picture. Read
 * from WhatsApp, so only while the session is ready. After each change the profile is read again,
 * so what shows is what WhatsApp now has.
 */
export const ProfilePanel = ({ sessionId, phone, ready }: { sessionId: string; phone: string | null; ready: boolean }) => {
  const [profile, setProfile] = useState<Profile | null>(null)
  const [version, setVersion] = useState(0)
  const [name, setName] = useState("")
  const [about, setAbout] = useState("")
  const [file, setFile] = useState<File | null>(null)
  const { error, setError, busy, run } = useAction()
  // Shown through the API (the bytes it caches for the account's own id), not the URL itself:
  // that may be WhatsApp's CDN or an engine's own scheme (the sandbox's), which a page cannot load.
  const picture = useApiImage(
    profile?.picture == null || phone === null ? null : `/api/sessions/${sessionId}/contacts/${phone}@c.us/picture?format=image`,
    version
  )

  const show = (loaded: Profile) => {
    setProfile(loaded)
    setName(loaded.name ?? "")
    setAbout(loaded.about ?? "")
    setVersion((count) => count + 1)
  }

  useEffect(() => {
    if (!ready) {
      setProfile(null)
      return
    }
    void run("load", async () => show(await api.profile.get(sessionId)))
  }, [sessionId, ready])

  const change = (name: string, action: () => Promise<unknown>) =>
    void run(name, async () => {
      await action()
      show(await api.profile.get(sessionId))
    })

  return (
    <div class="card" data-testid="profile-panel">
      <h2>Profile</h2>
      <ErrorBox error={error} onDismiss={() => setError(null)} />
      {!ready ? (
        <p class="muted">The profile is read from WhatsApp: it shows once the session is linked and ready.</p>
      ) : profile === null ? (
        <p class="muted">{busy ? "Loading…" : ""}</p>
      ) : (
        <>
          <div class="form-row">
            {picture !== null
              ? <img class="profile-picture" data-testid="profile-picture" src={picture} alt="Profile picture" />
              : <span class="profile-picture placeholder muted" data-testid="profile-no-picture">No picture</span>}
            <dl class="facts">
              <dt>Name</dt><dd data-testid="profile-current-name">{profile.name ?? "—"}</dd>
              <dt>About</dt><dd data-testid="profile-current-about" class="break">{profile.about ?? "—"}</dd>
            </dl>
          </div>
          <form class="form-row" onSubmit={(event) => {
            event.preventDefault()
            change("name", () => api.profile.setName(sessionId, name.trim()))
          }}>
            <Field label="Name (up to 25 characters)">
              <input data-testid="profile-name" value={name} maxLength={25} required onInput={(event) => setName(event.currentTarget.value)} />
            </Field>
            <button type="submit" data-testid="profile-name-save" disabled={busy !== null}>Save name</button>
          </form>
          <form class="form-row" onSubmit={(event) => {
            event.preventDefault()
            change("about", () => api.profile.setAbout(sessionId, about))
          }}>
            <Field label="About (up to 139 characters)" wide>
              <input data-testid="profile-about" value={about} maxLength={139} onInput={(event) => setAbout(event.currentTarget.value)} />
            </Field>
            <button type="submit" data-testid="profile-about-save" disabled={busy !== null}>Save about</button>
          </form>
          <form class="form-row" onSubmit={(event) => {
            event.preventDefault()
            if (file !== null) change("picture", () => api.profile.setPicture(sessionId, file))
          }}>
            <Field label="New picture (cropped to a 640×640 square)">
              <input type="file" accept="image/jpeg,image/png,image/webp" data-testid="profile-picture-file" required
                onChange={(event) => setFile(event.currentTarget.files?.[0] ?? null)} />
            </Field>
            <button type="submit" data-testid="profile-picture-upload" disabled={busy !== null || file === null}>Upload picture</button>
            <button type="button" class="danger" data-testid="profile-picture-remove" disabled={busy !== null || profile.picture === null}
              onClick={() => change("picture", () => api.profile.removePicture(sessionId))}>
              Remove picture
            </button>
          </form>
        </>
      )}
    </div>
  )
}
