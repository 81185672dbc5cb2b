import type { MediaKind } from "../api"
import {
  type ContactRow, emptyContact, MAX_CONTACTS, MAX_POLL_OPTIONS, MIN_POLL_OPTIONS, type SendDraft
} from "../sendRequests"
import { Field } from "../ui"

/** The message tester's fields for what a send carries, one set per kind (the page holds the draft). */

export interface DraftProps {
  readonly draft: SendDraft
  readonly change: (patch: Partial<SendDraft>) => void
}

const accepted: Record<MediaKind, string | undefined> = {
  image: "image/jpeg,image/png,image/webp",
  video: "video/mp4,video/3gpp",
  audio: "audio/*",
  document: undefined,
  sticker: "image/webp,image/png,image/jpeg,image/gif"
}

export const MediaFields = ({ kind, draft, change }: DraftProps & { readonly kind: MediaKind }) => (
  <div class="form-row">
    <Field label="From" narrow>
      <select data-testid="tester-media-from" value={draft.media.from}
        onChange={(event) => change({ media: event.currentTarget.value === "url" ? { from: "url", url: "" } : { from: "file", file: null } })}>
        <option value="file">a file</option>
        <option value="url">a URL</option>
      </select>
    </Field>
    {draft.media.from === "file" ? (
      <Field label="File" wide>
        <input type="file" data-testid="tester-file" required accept={accepted[kind]}
          onChange={(event) => change({ media: { from: "file", file: event.currentTarget.files?.[0] ?? null } })} />
      </Field>
    ) : (
      <Field label="URL" wide>
        <input type="url" data-testid="tester-media-url" required placeholder="https://example.com/file" value={draft.media.url}
          onInput={(event) => change({ media: { from: "url", url: event.currentTarget.value } })} />
      </Field>
    )}
    {kind === "audio" && (
      <label class="check">
        <input type="checkbox" data-testid="tester-ptt" checked={draft.ptt} onChange={(event) => change({ ptt: event.currentTarget.checked })} />
        Voice note
      </label>
    )}
  </div>
)

export const LocationFields = ({ draft, change }: DraftProps) => {
  const set = (patch: Partial<SendDraft["location"]>) => change({ location: { ...draft.location, ...patch } })
  return (
    <div class="form-row">
      <Field label="Latitude" narrow>
        <input type="number" step="any" min={-90} max={90} required data-testid="tester-latitude" value={draft.location.latitude}
          onInput={(event) => set({ latitude: event.currentTarget.value })} />
      </Field>
      <Field label="Longitude" narrow>
        <input type="number" step="any" min={-180} max={180} required data-testid="tester-longitude" value={draft.location.longitude}
          onInput={(event) => set({ longitude: event.currentTarget.value })} />
      </Field>
      <Field label="Name (optional)">
        <input data-testid="tester-location-name" maxLength={1024} value={draft.location.name}
          onInput={(event) => set({ name: event.currentTarget.value })} />
      </Field>
      <Field label="Address (optional)" wide>
        <input data-testid="tester-location-address" maxLength={1024} value={draft.location.address}
          onInput={(event) => set({ address: event.currentTarget.value })} />
      </Field>
    </div>
  )
}

export const ContactFields = ({ draft, change }: DraftProps) => {
  const set = (index: number, patch: Partial<ContactRow>) =>
    change({ contacts: draft.contacts.map((row, at) => (at === index ? { ...row, ...patch } : row)) })
  return (
    <fieldset>
      <legend>Contact cards ({draft.contacts.length} of at most {MAX_CONTACTS})</legend>
      {draft.contacts.map((row, index) => (
        <div class="form-row contact-row" key={index} data-testid="tester-contact">
          <Field label="Name">
            <input data-testid="tester-contact-name" required maxLength={256} value={row.name}
              onInput={(event) => set(index, { name: event.currentTarget.value })} />
          </Field>
          <Field label="Phone">
            <input type="tel" data-testid="tester-contact-phone" required placeholder="+15551234567" value={row.phone}
              onInput={(event) => set(index, { phone: event.currentTarget.value })} />
          </Field>
          <Field label="Organization (optional)">
            <input data-testid="tester-contact-organization" maxLength={256} value={row.organization}
              onInput={(event) => set(index, { organization: event.currentTarget.value })} />
          </Field>
          <Field label="Email (optional)">
            <input type="email" data-testid="tester-contact-email" maxLength={256} value={row.email}
              onInput={(event) => set(index, { email: event.currentTarget.value })} />
          </Field>
          <button type="button" data-testid="tester-contact-remove" disabled={draft.contacts.length <= 1}
            onClick={() => change({ contacts: draft.contacts.filter((_, at) => at !== index) })}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" data-testid="tester-contact-add" disabled={draft.contacts.length >= MAX_CONTACTS}
        onClick={() => change({ contacts: [...draft.contacts, emptyContact] })}>
        Add contact
      </button>
    </fieldset>
  )
}

export const PollFields = ({ draft, change }: DraftProps) => {
  const { poll } = draft
  // Fewer options than choices allowed is a poll the server refuses: removing one lowers the count with it.
  const setOptions = (options: ReadonlyArray<string>) =>
    change({ poll: { ...poll, options, selectableCount: Math.min(poll.selectableCount, options.length) } })
  return (
    <fieldset>
      <legend>Poll</legend>
      <div class="form-row">
        <Field label="Question" wide>
          <input data-testid="tester-poll-name" required maxLength={255} value={poll.name}
            onInput={(event) => change({ poll: { ...poll, name: event.currentTarget.value } })} />
        </Field>
        <Field label="Choices per voter" narrow>
          <select data-testid="tester-poll-selectable" value={String(poll.selectableCount)}
            onChange={(event) => change({ poll: { ...poll, selectableCount: Number(event.currentTarget.value) } })}>
            {poll.options.map((_, index) => <option key={index} value={String(index + 1)}>{index + 1}</option>)}
          </select>
        </Field>
      </div>
      {poll.options.map((option, index) => (
        <div class="form-row" key={index}>
          <Field label={`Option ${index + 1}`} wide>
            <input data-testid="tester-poll-option" required maxLength={100} value={option}
              onInput={(event) => setOptions(poll.options.map((text, at) => (at === index ? event.currentTarget.value : text)))} />
          </Field>
          <button type="button" data-testid="tester-poll-remove" disabled={poll.options.length <= MIN_POLL_OPTIONS}
            onClick={() => setOptions(poll.options.filter((_, at) => at !== index))}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" data-testid="tester-poll-add" disabled={poll.options.length >= MAX_POLL_OPTIONS}
        onClick={() => setOptions([...poll.options, ""])}>
        Add option
      </button>
    </fieldset>
  )
}
