import { useState } from "preact/hooks"
import { api, type Chat, type MuteChatRequest } from "../api"
import { ConfirmDelete, Field } from "../ui"
import { isMuted } from "./chatMarks"

const mutes: ReadonlyArray<{ readonly name: string; readonly label: string; readonly mute: MuteChatRequest }> = [
  { name: "8h", label: "Mute 8 h", mute: { hours: 8 } },
  { name: "week", label: "Mute 1 week", mute: { hours: 24 * 7 } }
]

/** What a chat's view runs: one of its actions, the chat it answers with, if any. */
export type RunChatAction = (name: string, action: () => Promise<Chat | void>) => void

/**
 * A chat's buttons: archive, pin, mute for 8 h or a week or unmute, mark unread, ask the phone
 * for older messages, and delete (asked first: it clears the chat for this account).
 */
export const ChatActions = ({ sessionId, chat, busy, onAction, onHistoryRequested, onDelete }: {
  sessionId: string
  chat: Chat
  busy: boolean
  onAction: RunChatAction
  onHistoryRequested: (count: number) => void
  onDelete: () => void
}) => {
  const [historyCount, setHistoryCount] = useState("50")
  const [askingDelete, setAskingDelete] = useState(false)
  const { chatId } = chat

  const requestHistory = (event: Event) => {
    event.preventDefault()
    const count = Number(historyCount)
    onAction("history", async () => {
      await api.chats.requestHistory(sessionId, chatId, count)
      onHistoryRequested(count)
    })
  }

  return (
    <div class="stack">
      <div class="actions">
        <button type="button" data-testid="chat-archive" disabled={busy}
          onClick={() => onAction("archive", () => api.chats.archive(sessionId, chatId, !chat.archived))}>
          {chat.archived ? "Unarchive" : "Archive"}
        </button>
        <button type="button" data-testid="chat-pin" disabled={busy}
          onClick={() => onAction("pin", () => api.chats.pin(sessionId, chatId, !chat.pinned))}>
          {chat.pinned ? "Unpin" : "Pin"}
        </button>
        {mutes.map(({ name, label, mute }) => (
          <button key={name} type="button" data-testid={`chat-mute-${name}`} disabled={busy}
            onClick={() => onAction("mute", () => api.chats.mute(sessionId, chatId, mute))}>
            {label}
          </button>
        ))}
        <button type="button" data-testid="chat-unmute" disabled={busy || !isMuted(chat)}
          onClick={() => onAction("mute", () => api.chats.mute(sessionId, chatId, { until: null }))}>
          Unmute
        </button>
        <button type="button" data-testid="chat-mark-unread" disabled={busy}
          onClick={() => onAction("unread", () => api.chats.markUnread(sessionId, chatId))}>
          Mark unread
        </button>
        <ConfirmDelete testId="chat-delete" asking={askingDelete} disabled={busy}
          question={<span>Clear and remove this chat for this account?</span>}
          onAsk={() => setAskingDelete(true)}
          onCancel={() => setAskingDelete(false)}
          onConfirm={() => {
            setAskingDelete(false)
            onDelete()
          }} />
      </div>
      <form class="form-row" onSubmit={requestHistory}>
        <Field label="Older messages" narrow>
          <input data-testid="chat-history-count" type="number" min={1} max={500} required value={historyCount}
            onInput={(event) => setHistoryCount(event.currentTarget.value)} />
        </Field>
        <button type="submit" data-testid="chat-history-request" disabled={busy}>Ask the phone for them</button>
      </form>
    </div>
  )
}
