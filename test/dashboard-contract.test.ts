import { execFile } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Schema } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { DraftError, emptyDraft, requestOf, type SendDraft, type SendRequest } from "../dashboard/src/sendRequests.js"
import {
  SendContactRequest, SendLocationRequest, SendMediaRequest, SendPollRequest, SendTextRequest
} from "../src/domain/Message.js"

/**
 * The dashboard's request and response types are the server's schemas (dashboard/src/model.ts
 * imports them as types). Here a copy of the dashboard and of src/domain has a field renamed on
 * the server's side, and the dashboard's type check must then refuse the pages that use it.
 */
const repo = join(import.meta.dirname, "..")
const copy = mkdtempSync(join(tmpdir(), "dashboard-contract-"))
afterAll(() => rmSync(copy, { recursive: true, force: true }))

const rename = (file: string, from: string, to: string) => {
  const path = join(copy, file)
  const text = readFileSync(path, "utf8")
  expect(text).toContain(from)
  writeFileSync(path, text.replace(from, to))
}

/** The dashboard's type check on the copy: its exit code and what it printed. */
const typeCheckCopy = async () => {
  const tsc = join(repo, "node_modules", "typescript", "bin", "tsc")
  try {
    await promisify(execFile)(process.execPath, [tsc, "-p", join(copy, "dashboard", "tsconfig.json")], { cwd: copy })
    return { failed: false, output: "" }
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string }
    return { failed: true, output: stdout + stderr }
  }
}

describe("the dashboard's contract with the server", () => {
  it("fails the dashboard's type check when the server renames a field it reads or sends", async () => {
    cpSync(join(repo, "dashboard"), join(copy, "dashboard"), { recursive: true })
    cpSync(join(repo, "src", "domain"), join(copy, "src", "domain"), { recursive: true })
    symlinkSync(join(repo, "node_modules"), join(copy, "node_modules"), "dir")
    // Fields of answers (a message's direction, a poll option's votes) and of requests (a
    // webhook's switch, a poll's number of choices).
    rename("src/domain/Message.ts", "  fromMe: Schema.Boolean,", "  isFromMe: Schema.Boolean,")
    rename("src/domain/Message.ts", "    votes: Schema.Number,", "    count: Schema.Number,")
    rename("src/domain/Message.ts", "  selectableCount: Schema.optional(", "  maxChoices: Schema.optional(")
    rename("src/domain/Webhook.ts", "  enabled: Schema.optional(Schema.Boolean),", "  active: Schema.optional(Schema.Boolean),")

    const { failed, output } = await typeCheckCopy()

    expect(failed).toBe(true)
    expect(output).toMatch(/dashboard\/src\/MessageTable\.tsx.*Property 'fromMe' does not exist/)
    expect(output).toMatch(/dashboard\/src\/pages\/WebhookForm\.tsx.*'enabled' does not exist/)
    expect(output).toMatch(/dashboard\/src\/MessageContent\.tsx.*Property 'votes' does not exist/)
    // A request's excess field: tsc names it on the line after the one naming the file.
    expect(output).toMatch(/dashboard\/src\/sendRequests\.ts\(\d+,\d+\): error .*\n.*'selectableCount' does not exist/)
  }, 120_000)
})

/** The server's schema for each JSON send the tester makes: what the endpoint decodes. */
const decodeWithServerSchema = (send: SendRequest): unknown => {
  if (!("json" in send)) throw new Error(`${send.endpoint} was built as multipart`)
  const schemas: Record<string, Schema.Schema<any, any>> = {
    "send-text": SendTextRequest,
    "send-location": SendLocationRequest,
    "send-contact": SendContactRequest,
    "send-poll": SendPollRequest
  }
  return Schema.decodeUnknownSync(schemas[send.endpoint] ?? SendMediaRequest, { onExcessProperty: "error" })(send.json)
}

const drafted = (patch: Partial<SendDraft>): SendDraft => ({ ...emptyDraft, chatId: " +15551234567 ", ...patch })
const bob = "15551234567@c.us"

describe("the message tester's requests, decoded by the server's schemas", () => {
  it("sends a text with its link-preview switch and typing time", () => {
    const send = requestOf(drafted({ kind: "text", text: "see https://example.com", linkPreview: false, typing: "1500" }))
    expect(send.endpoint).toBe("send-text")
    expect(decodeWithServerSchema(send)).toEqual({ chatId: bob, text: "see https://example.com", linkPreview: false, typingMs: 1500 })
    // Left alone, the preview is on and nothing is typed first.
    expect(decodeWithServerSchema(requestOf(drafted({ text: "hi" })))).toEqual({ chatId: bob, text: "hi", linkPreview: true })
  })

  it("sends a location's coordinates as numbers, leaving a blank address out", () => {
    const send = requestOf(drafted({
      kind: "location",
      typing: "auto",
      location: { latitude: "52.5163", longitude: "-13.3777", name: "Brandenburg Gate", address: "  " }
    }))
    expect(send.endpoint).toBe("send-location")
    expect(decodeWithServerSchema(send)).toEqual({
      chatId: bob, latitude: 52.5163, longitude: -13.3777, name: "Brandenburg Gate", typingMs: "auto"
    })
  })

  it("sends every contact row, with only the optional fields filled in", () => {
    const send = requestOf(drafted({
      kind: "contact",
      contacts: [
        { name: "Ada", phone: "+44 20 7946 0000", organization: "Engines Ltd", email: "ada@example.com" },
        { name: "Grace", phone: "+15550001111", organization: "", email: "" }
      ]
    }))
    expect(send.endpoint).toBe("send-contact")
    expect(decodeWithServerSchema(send)).toEqual({
      chatId: bob,
      contacts: [
        { name: "Ada", phone: "+44 20 7946 0000", organization: "Engines Ltd", email: "ada@example.com" },
        { name: "Grace", phone: "+15550001111" }
      ]
    })
  })

  it("sends a poll's question, options and number of choices", () => {
    const send = requestOf(drafted({ kind: "poll", poll: { name: "Lunch?", options: ["Pizza", " Soup ", "Salad"], selectableCount: 2 } }))
    expect(send.endpoint).toBe("send-poll")
    expect(decodeWithServerSchema(send)).toEqual({ chatId: bob, name: "Lunch?", options: ["Pizza", "Soup", "Salad"], selectableCount: 2 })
  })

  it("sends a sticker from a URL without a caption, and other media from a URL with theirs", () => {
    const sticker = requestOf(drafted({ kind: "sticker", text: "ignored", media: { from: "url", url: "https://example.com/s.webp" } }))
    expect(sticker.endpoint).toBe("send-sticker")
    expect(decodeWithServerSchema(sticker)).toEqual({ chatId: bob, media: { url: "https://example.com/s.webp" } })
    const voice = requestOf(drafted({ kind: "audio", text: "listen", ptt: true, typing: "0", media: { from: "url", url: "https://example.com/a.ogg" } }))
    expect(voice.endpoint).toBe("send-audio")
    expect(decodeWithServerSchema(voice)).toEqual({
      chatId: bob, media: { url: "https://example.com/a.ogg" }, caption: "listen", ptt: true, typingMs: 0
    })
  })

  it("refuses before sending what it cannot express: a typing time in words, a latitude left blank", () => {
    expect(() => requestOf(drafted({ text: "hi", typing: "soon" }))).toThrow(DraftError)
    expect(() => requestOf(drafted({ kind: "location", location: { ...emptyDraft.location, longitude: "13.4" } }))).toThrow(/latitude/)
  })
})
