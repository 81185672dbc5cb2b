import { randomBytes } from "node:crypto"
import { uuidv7 } from "../../src/domain/uuidv7.js"
import { type MessageRow, noExtras } from "../../src/runtime/ports/store/MessageRepo.js"
import type { SessionRow } from "../../src/runtime/ports/store/SessionRepo.js"
import type { WebhookRow } from "../../src/runtime/ports/store/WebhookRepo.js"

let sequence = 0

/** A session row for repository-level tests: unique id and name, times that sort in creation order. */
export const sessionRow = (overrides: Partial<SessionRow> = {}): SessionRow => {
  sequence += 1
  const at = `2024-01-01T00:${String(Math.floor(sequence / 60) % 60).padStart(2, "0")}:${String(sequence % 60).padStart(2, "0")}.000Z`
  return {
    id: `s-${sequence}`,
    name: `session ${sequence}`,
    engine: "sandbox",
    status: "created",
    desiredRunning: false,
    phone: null,
    pushName: null,
    lid: null,
    proxyUrl: null,
    lastError: null,
    settings: null,
    createdAt: at,
    updatedAt: at,
    ...overrides
  }
}

/** A webhook row wanting every event of every session, with a fresh secret. */
export const webhookRow = (url: string, overrides: Partial<WebhookRow> = {}): WebhookRow => {
  const now = new Date().toISOString()
  return {
    id: uuidv7(),
    sessionId: null,
    url,
    events: ["*"],
    enabled: true,
    headers: {},
    maxAttempts: 8,
    secret: `whsec_${randomBytes(32).toString("base64")}`,
    disabledReason: null,
    createdAt: now,
    updatedAt: now,
    ...overrides
  }
}

/** A stored outbound text message of `sessionId`, `pending`, dated 2024-02-01. */
export const messageRow = (sessionId: string, id: string, overrides: Partial<MessageRow> = {}): MessageRow => ({
  id,
  sessionId,
  chatId: "15550000001@c.us",
  from: "15550000000@c.us",
  to: "15550000001@c.us",
  fromMe: true,
  type: "text",
  text: `text of ${id}`,
  caption: null,
  media: null,
  status: "pending",
  ack: 0,
  error: null,
  engineMessageId: null,
  quotedMessageId: null,
  mentions: null,
  batchId: null,
  timestamp: "2024-02-01T00:00:00.000Z",
  createdAt: "2024-02-01T00:00:00.000Z",
  updatedAt: "2024-02-01T00:00:00.000Z",
  ...noExtras,
  ...overrides
})
