import { useEffect, useMemo, useState } from "preact/hooks"
import { api, type Chat } from "../api"
import { MessageTable } from "../MessageTable"
import { usePagedList } from "../paging"
import { ErrorBox, Pager, useAction } from "../ui"
import { ChatActions } from "./ChatActions"
import { ChatMarks, chatTitle } from "./chatMarks"

const LIMIT = 20

/**
 * One chat opened: its marks, its actions, and its messages a page at a time (newest first, as
 * the message list). `changes` counts what the live stream told of this session: each one reads
 * the chat and its messages again.
 */
export const ChatView = ({ sessionId, chatId, changes, onChanged, onDeleted }: {
  sessionId: string
  chatId: string
  changes: number
  onChanged: () => void
  onDeleted: () => void
}) => {
  const [chat, setChat] = useState<Chat | null>(null)
  const [historyAsked, setHistoryAsked] = useState<number | null>(null)
  const actions = useAction()
  const loading = useAction()
  const shown = useMemo(() => ({ sessionId, chatId, changes }), [sessionId, chatId, changes])
  const messages = usePagedList(shown, (current, page) => api.chats.messages(current.sessionId, current.chatId, page, LIMIT), loading.run)

  useEffect(() => {
    let current = true
    void loading.run("chat", async () => {
      const loaded = await api.chats.get(sessionId, chatId)
      if (current) setChat(loaded)
    })
    return () => {
      current = false
    }
  }, [shown])

  const runAction = (name: string, action: () => Promise<Chat | void>) =>
    void actions.run(name, async () => {
      const updated = await action()
      if (updated !== undefined) setChat(updated)
      onChanged()
    })

  const remove = () =>
    void actions.run("delete", async () => {
      await api.chats.remove(sessionId, chatId)
      onDeleted()
    })

  return (
    <div class="card" data-testid="chat-view" data-chat-id={chatId}>
      <div class="page-head">
        <h2 class="break">{chat === null ? chatId : chatTitle(chat)}</h2>
        {chat !== null && <ChatMarks chat={chat} />}
      </div>
      <ErrorBox error={actions.error ?? loading.error} onDismiss={() => {
        actions.setError(null)
        loading.setError(null)
      }} />
      {chat !== null && (
        <ChatActions sessionId={sessionId} chat={chat} busy={actions.busy !== null} onAction={runAction}
          onHistoryRequested={setHistoryAsked} onDelete={remove} />
      )}
      {historyAsked !== null && (
        <p class="notice" role="status" data-testid="chat-history-notice">
          Asked the phone for {historyAsked} older messages: they show here, marked “history”, as it sends them.
        </p>
      )}
      {messages.result !== null && (
        <>
          <Pager pagination={messages.result.pagination} prefix="chat-messages" onPage={messages.setPage} />
          {messages.result.items.length === 0
            ? <p class="muted" data-testid="chat-messages-empty">No messages in this chat yet.</p>
            : <MessageTable messages={messages.result.items} showChat={false} />}
        </>
      )}
    </div>
  )
}
