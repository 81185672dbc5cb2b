import type { Chat, Message } from "../api"
import { Time } from "../ui"
import { ChatMarks, chatTitle, isMuted } from "./chatMarks"

/** A line of the newest message: its text or caption, else its kind; "You:" when sent. */
const preview = (message: Message | null) => {
  if (message === null) return ""
  const said = message.revoked ? "deleted" : message.text ?? message.caption ?? `[${message.type}]`
  return message.fromMe ? `You: ${said}` : said
}

/** The chat list of one page, most recent activity first (the server's order); a row opens its chat. */
export const ChatList = ({ chats, openChatId, onOpen }: {
  chats: ReadonlyArray<Chat>
  openChatId: string | null
  onOpen: (chatId: string) => void
}) => (
  <div class="table-wrap">
    <table class="table cards chat-list">
      <thead>
        <tr>
          <th>Chat</th>
          <th>Type</th>
          <th>Last message</th>
          <th>Marks</th>
          <th>Activity</th>
        </tr>
      </thead>
      <tbody>
        {chats.map((chat) => (
          <tr key={chat.chatId} data-testid="chat-row" data-chat-id={chat.chatId} data-unread={chat.unreadCount}
            data-archived={chat.archived} data-pinned={chat.pinned} data-muted={isMuted(chat)}
            aria-selected={chat.chatId === openChatId} class={chat.chatId === openChatId ? "selected" : undefined}>
            <td data-label="Chat">
              <button type="button" class="link chat-open" data-testid="chat-open" onClick={() => onOpen(chat.chatId)}>
                {chatTitle(chat)}
              </button>
              {chat.name !== null && <div class="muted small mono break">{chat.chatId}</div>}
            </td>
            <td data-label="Type">{chat.type}</td>
            <td data-label="Last message" class="content-cell" data-testid="chat-preview">{preview(chat.lastMessage)}</td>
            <td data-label="Marks"><ChatMarks chat={chat} /></td>
            <td data-label="Activity"><Time iso={chat.updatedAt} /></td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
)
