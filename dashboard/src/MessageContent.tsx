import type { ContactCard, LinkPreview, Location, Message, PollResults } from "./api"
import { Time } from "./ui"

/**
 * What a message says, whatever its type: text or media, a location, contact cards, a poll with
 * its votes, a link preview; and its marks (forwarded, edited with the earlier texts, deleted,
 * starred, pinned). Shown in the message list and under the tester's sent message.
 */
export const MessageContent = ({ message }: { message: Message }) => (
  <div class="message-content" data-testid="message-content">
    <Marks message={message} />
    {message.revoked ? (
      <p class="muted" data-testid="message-revoked"><em>This message was deleted.</em></p>
    ) : (
      <>
        {message.text !== null && <p class="message-text" data-testid="message-text">{message.text}</p>}
        {message.media !== null && (
          <p data-testid="message-media">
            [{message.type}: {message.media.filename ?? message.media.mimetype}]{message.caption ? ` ${message.caption}` : ""}
          </p>
        )}
        {message.location !== null && <LocationView location={message.location} />}
        {message.contacts !== null && <ContactsView contacts={message.contacts} />}
        {message.poll !== null && <PollView poll={message.poll} />}
        {message.linkPreview !== null && <LinkPreviewView preview={message.linkPreview} />}
        {isEmpty(message) && <p class="muted">[{message.type}]</p>}
      </>
    )}
    {message.edits.length > 0 && (
      <details class="edits" data-testid="message-edits">
        <summary>Earlier texts ({message.edits.length})</summary>
        <ol>
          {message.edits.map((edit, index) => (
            <li key={index} data-testid="message-edit"><s>{edit.text}</s> <span class="muted small">until <Time iso={edit.at} /></span></li>
          ))}
        </ol>
      </details>
    )}
  </div>
)

const isEmpty = (message: Message) =>
  message.text === null && message.media === null && message.location === null && message.contacts === null &&
  message.poll === null && message.linkPreview === null

/** A link only to the web: a received message may name any scheme (javascript: included). */
const webUrl = (url: string | null | undefined) => (url && /^https?:\/\//i.test(url) ? url : null)

const Marks = ({ message }: { message: Message }) => {
  const marks: Array<[string, string, string | undefined]> = []
  if (message.forwarded) marks.push(["forwarded", "↪ forwarded", undefined])
  if (message.editedAt !== null) marks.push(["edited", "✎ edited", message.editedAt])
  if (message.revoked) marks.push(["revoked", "deleted", undefined])
  if (message.starred) marks.push(["starred", "★ starred", undefined])
  if (message.pinned) marks.push(["pinned", "pinned", undefined])
  if (marks.length === 0) return null
  return (
    <p class="marks">
      {marks.map(([mark, label, at]) => (
        <span key={mark} class={`badge mark-${mark}`} data-testid="message-mark" data-mark={mark} title={at}>{label}</span>
      ))}
    </p>
  )
}

const mapLink = ({ latitude, longitude }: Location) =>
  `https://www.openstreetmap.org/?mlat=${latitude}&mlon=${longitude}#map=16/${latitude}/${longitude}`

const LocationView = ({ location }: { location: Location }) => {
  const link = webUrl(location.url)
  return (
    <div class="location" data-testid="message-location">
      <span class="muted small">Location</span>{" "}
      {location.name !== null && <strong>{location.name}</strong>}
      {location.address !== null && <span> {location.address}</span>}{" "}
      <a href={mapLink(location)} target="_blank" rel="noopener noreferrer" class="mono" data-testid="message-location-map">
        {location.latitude}, {location.longitude}
      </a>
      {link !== null && <> · <a href={link} target="_blank" rel="noopener noreferrer">{link}</a></>}
    </div>
  )
}

const ContactsView = ({ contacts }: { contacts: ReadonlyArray<ContactCard> }) => (
  <ul class="contacts" data-testid="message-contacts">
    {contacts.map((contact, index) => (
      <li key={index} data-testid="message-contact">
        <strong>{contact.name}</strong>
        {contact.phone !== null && <span class="mono"> {contact.phone}</span>}
        {contact.organization !== null && <span> · {contact.organization}</span>}
        {contact.email !== null && <span> · {contact.email}</span>}
      </li>
    ))}
  </ul>
)

const PollView = ({ poll }: { poll: PollResults }) => (
  <div class="poll" data-testid="message-poll">
    <p>
      <span class="muted small">Poll</span> <strong>{poll.name}</strong>{" "}
      <span class="muted small">
        ({poll.selectableCount === 0 ? "any number of choices" : `up to ${poll.selectableCount} choice${poll.selectableCount === 1 ? "" : "s"}`},{" "}
        {poll.totalVoters} voter{poll.totalVoters === 1 ? "" : "s"})
      </span>
    </p>
    <ul>
      {poll.options.map((option) => (
        <li key={option.name} data-testid="message-poll-option" data-option={option.name} data-votes={option.votes}
          title={option.voters.join(", ")}>
          <span class="poll-bar" style={{ width: `${poll.totalVoters === 0 ? 0 : (100 * option.votes) / poll.totalVoters}%` }} />
          <span class="poll-label">{option.name}</span> <strong>{option.votes}</strong>
        </li>
      ))}
    </ul>
  </div>
)

const LinkPreviewView = ({ preview }: { preview: LinkPreview }) => {
  const link = webUrl(preview.url)
  return (
    <div class="link-preview" data-testid="message-link-preview">
      {preview.thumbnail !== undefined && <img src={`data:image/jpeg;base64,${preview.thumbnail}`} alt="" />}
      <div>
        {preview.title !== null && <strong>{preview.title}</strong>}
        {preview.description !== null && <p class="muted small">{preview.description}</p>}
        {link === null ? <span class="small">{preview.url}</span> : (
          <a href={link} target="_blank" rel="noopener noreferrer" class="small">{link}</a>
        )}
      </div>
    </div>
  )
}
