import type { Message } from "./api"
import { MessageContent } from "./MessageContent"
import { StatusBadge, Time } from "./ui"

/**
 * Messages as a table (cards at phone width): time, direction, chat, type, content with its
 * reactions and failure, status. The Messages page lists any chat's; a chat's own view leaves
 * the chat column out.
 */
export const MessageTable = ({ messages, showChat = true }: { messages: ReadonlyArray<Message>; showChat?: boolean }) => (
  <div class="table-wrap">
    <table class="table cards">
      <thead>
        <tr>
          <th>Time</th>
          <th>Dir.</th>
          {showChat && <th>Chat</th>}
          <th>Type</th>
          <th>Content</th>
          <th>Status</th>
        </tr>
      </thead>
      <tbody>
        {messages.map((message) => (
          <tr key={message.id} data-testid="message-row" data-message-id={message.id} data-direction={message.fromMe ? "out" : "in"}
            data-source={message.source}>
            <td data-label="Time"><Time iso={message.timestamp} /></td>
            <td data-label="Direction">{message.fromMe ? "→ out" : "← in"}</td>
            {showChat && <td data-label="Chat" class="mono">{message.chatId}</td>}
            <td data-label="Type">
              {message.type}
              {/* Brought by the phone's history sync rather than seen live. */}
              {message.source === "history" && <> <span class="badge" data-testid="message-history">history</span></>}
            </td>
            <td data-label="Content" class="content-cell">
              <MessageContent message={message} />
              {message.reactions.length > 0 && (
                <span class="reactions"> {message.reactions.map((reaction) => reaction.emoji).join(" ")}</span>
              )}
              {message.error && <div class="muted small"><code>{message.error.code}</code> {message.error.message}</div>}
            </td>
            <td data-label="Status"><StatusBadge status={message.status} /></td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
)
