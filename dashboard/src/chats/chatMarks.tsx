import type { Chat } from "../api"
import { formatTime } from "../ui"

/** Muted now: `mutedUntil` is still ahead (a past moment is a mute that ran out). */
export const isMuted = (chat: Chat, now = Date.now()) => chat.mutedUntil !== null && Date.parse(chat.mutedUntil) > now

/** The chat's name, or its id when WhatsApp gave it none. */
export const chatTitle = (chat: Chat) => chat.name ?? chat.chatId

/**
 * What sets a chat apart in the list and in its view: unread messages (a count, or just "unread"
 * when marked so without one: `unreadCount` -1), archived, pinned, muted (until when: its tooltip).
 */
export const ChatMarks = ({ chat }: { chat: Chat }) => (
  <span class="marks">
    {chat.unreadCount !== 0 && (
      <span class="badge badge-unread" data-testid="chat-unread" title="unread">
        {chat.unreadCount > 0 ? chat.unreadCount : "unread"}
      </span>
    )}
    {chat.pinned && <span class="badge" data-testid="chat-mark" data-mark="pinned">pinned</span>}
    {chat.archived && <span class="badge" data-testid="chat-mark" data-mark="archived">archived</span>}
    {isMuted(chat) && (
      <span class="badge" data-testid="chat-mark" data-mark="muted" title={`muted until ${formatTime(chat.mutedUntil)}`}>
        muted
      </span>
    )}
  </span>
)
