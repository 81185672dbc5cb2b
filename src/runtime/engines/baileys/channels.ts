import { type BinaryNode, getBinaryNodeChild, getBinaryNodeChildren, proto, type WASocket } from "@whiskeysockets/baileys"
import { Effect } from "effect"
import type { Channel, ChannelMessage, ChannelRole } from "../../../domain/Channel.js"
import { EngineError } from "../../Engine.js"
import type { ChannelOperations } from "../../EngineDirectory.js"
import { engineErrorOf, iqErrorOf, statusCodeOf } from "./disconnect.js"
import { readContent } from "./messages.js"

/**
 * Channels (WhatsApp's newsletters) through Baileys (lib/Socket/newsletter.js). Most calls are
 * `w:mex` GraphQL queries whose JSON comes back as Baileys found it:
 * - `newsletterCreate` → `{ id, name, description, invite, creation_time (s), subscribers, … }`
 *   (rc14 flattens the create response; the creator is the owner);
 * - `newsletterMetadata` → the raw `xwa2_newsletter` object: `{ id, thread_metadata: { name:
 *   { text }, description: { text }, invite, creation_time: "s", subscribers_count: "n" },
 *   viewer_metadata: { role: OWNER|ADMIN|SUBSCRIBER|GUEST } }`, or null;
 * - follow / unfollow / delete → whatever the query returned;
 * - GraphQL errors are thrown as `Boom("GraphQL server error: …", { statusCode: error_code })`.
 * Messages are an `<iq xmlns=newsletter>` whose answer is a node: `<message_updates><messages>
 * <message server_id t type><plaintext>proto.Message</plaintext>`. Sends to `…@newsletter`
 * go through the ordinary send (Baileys writes them as plaintext).
 */

/** The slice of a socket the channel operations use (tests stub it). */
export type ChannelSocket = Pick<
  WASocket,
  "newsletterCreate" | "newsletterMetadata" | "newsletterFollow" | "newsletterUnfollow" | "newsletterDelete" | "newsletterFetchMessages"
>

type Json = { readonly [key: string]: unknown }
const object = (value: unknown): Json | undefined => (typeof value === "object" && value !== null ? (value as Json) : undefined)
/** A field that is a string, or an object `{ text }` (GraphQL's localized strings). */
const text = (value: unknown): string | undefined =>
  typeof value === "string" ? value : typeof object(value)?.["text"] === "string" ? (object(value)!["text"] as string) : undefined
const number = (value: unknown): number | undefined => {
  const parsed = typeof value === "number" ? value : typeof value === "string" && value !== "" ? Number(value) : Number.NaN
  return Number.isFinite(parsed) ? parsed : undefined
}
const isoOfSeconds = (seconds: number | undefined) => (seconds !== undefined && seconds > 0 ? new Date(seconds * 1000).toISOString() : null)

const roles: Record<string, ChannelRole> = { OWNER: "owner", ADMIN: "admin", SUBSCRIBER: "subscriber", GUEST: "guest" }

/** Either shape Baileys returns for a channel → the API's `Channel` (`role` when the answer does not say). */
export const channelOf = (raw: unknown, role: ChannelRole): Channel | null => {
  const channel = object(raw)
  const id = channel?.["id"]
  if (typeof id !== "string") return null
  const thread = object(channel!["thread_metadata"]) ?? {}
  const field = (flat: string, nested: string) => channel![flat] ?? thread[nested]
  const viewerRole = text(object(channel!["viewer_metadata"])?.["role"])
  const description = text(field("description", "description"))
  return {
    id,
    name: text(field("name", "name")) ?? "",
    description: description === undefined || description === "" ? null : description,
    inviteCode: text(field("invite", "invite")) ?? null,
    subscribers: number(field("subscribers", "subscribers_count")) ?? null,
    role: (viewerRole !== undefined ? roles[viewerRole] : undefined) ?? role,
    createdAt: isoOfSeconds(number(field("creation_time", "creation_time")))
  }
}

/** The `<message_updates>` answer of `newsletterFetchMessages` → messages, newest first. */
export const channelMessagesOf = (channelId: string, result: unknown): Array<ChannelMessage> => {
  const node = object(result) as BinaryNode | undefined
  const updates = getBinaryNodeChild(node, "message_updates") ?? node
  const list = getBinaryNodeChild(updates, "messages")
  const messages = getBinaryNodeChildren(list, "message").map((message) => {
    const plaintext = getBinaryNodeChild(message, "plaintext")?.content
    const content = plaintext instanceof Uint8Array ? readContent(proto.Message.decode(plaintext)) : { kind: "ignore" as const }
    const seconds = number(message.attrs["t"]) ?? 0
    return {
      id: message.attrs["server_id"] ?? message.attrs["id"] ?? "",
      channelId,
      type: content.kind === "text" ? "text" : content.kind === "media" ? content.media.kind : message.attrs["type"] ?? "unknown",
      text: content.kind === "text" ? content.text : content.kind === "media" ? content.media.caption : null,
      timestamp: new Date(seconds * 1000).toISOString(),
      seconds
    }
  })
  return messages
    .sort((a, b) => b.seconds - a.seconds || Number(b.id) - Number(a.id))
    .map(({ seconds: _, ...message }) => message)
}

const refuse = (refusal: "not_found" | "forbidden", code: string, message: string) =>
  new EngineError({ code, message: `baileys: ${message}`, transient: false, refusal })

/** A GraphQL refusal (`error_code` as the Boom's status) as the API should answer it. */
export const channelErrorOf = (operation: string, notFound: "CHANNEL_NOT_FOUND" | "INVITE_NOT_FOUND") => (error: unknown): EngineError => {
  // an `<iq type=error>` (the messages query) carries its code in `data`
  const iq = iqErrorOf(error)
  const status = iq?.code ?? statusCodeOf(error)
  const message = error instanceof Error ? error.message : String(error)
  const fromWhatsApp = iq !== undefined || message.startsWith("GraphQL server error")
  if (fromWhatsApp && status === 404) return refuse("not_found", notFound, message)
  if (fromWhatsApp && (status === 401 || status === 403)) return refuse("forbidden", "NOT_CHANNEL_ADMIN", message)
  return engineErrorOf(operation, error)
}

const missing = (code: "CHANNEL_NOT_FOUND" | "INVITE_NOT_FOUND", key: string) =>
  refuse("not_found", code, code === "CHANNEL_NOT_FOUND" ? `no channel ${key}` : `no channel has the invite code ${key}`)

export const makeChannelOperations = (sock: ChannelSocket): ChannelOperations => {
  const metadata = (type: "jid" | "invite", key: string) => {
    const notFound = type === "jid" ? "CHANNEL_NOT_FOUND" : "INVITE_NOT_FOUND"
    return Effect.tryPromise({ try: () => sock.newsletterMetadata(type, key), catch: channelErrorOf("CHANNEL_GET", notFound) }).pipe(
      Effect.flatMap((raw) => {
        const channel = channelOf(raw, "guest")
        return channel === null ? Effect.fail(missing(notFound, key)) : Effect.succeed(channel)
      })
    )
  }
  const act = (operation: string, run: () => Promise<unknown>) =>
    Effect.tryPromise({ try: run, catch: channelErrorOf(operation, "CHANNEL_NOT_FOUND") }).pipe(Effect.asVoid)
  return {
    create: (name, description) =>
      Effect.tryPromise({
        try: () => sock.newsletterCreate(name, description ?? undefined),
        catch: channelErrorOf("CHANNEL_CREATE", "CHANNEL_NOT_FOUND")
      }).pipe(Effect.flatMap((raw) => {
        const channel = channelOf(raw, "owner")
        return channel === null
          ? Effect.fail(new EngineError({ code: "CHANNEL_CREATE_FAILED", message: "baileys: WhatsApp's answer named no channel", transient: false }))
          : Effect.succeed(channel)
      })),
    get: (channelId) => metadata("jid", channelId),
    delete: (channelId) => act("CHANNEL_DELETE", () => sock.newsletterDelete(channelId)),
    subscribe: (target) =>
      Effect.gen(function*() {
        const channel = yield* ("inviteCode" in target ? metadata("invite", target.inviteCode) : metadata("jid", target.channelId))
        yield* act("CHANNEL_SUBSCRIBE", () => sock.newsletterFollow(channel.id))
        return channel.role === "guest" ? { ...channel, role: "subscriber" as const } : channel
      }),
    unsubscribe: (channelId) => act("CHANNEL_UNSUBSCRIBE", () => sock.newsletterUnfollow(channelId)),
    messages: (channelId, count) =>
      Effect.tryPromise({
        // rc14 types `since` and `after` as required, but sends them only when given
        try: () => (sock.newsletterFetchMessages as (jid: string, count: number) => Promise<unknown>)(channelId, count),
        catch: channelErrorOf("CHANNEL_MESSAGES", "CHANNEL_NOT_FOUND")
      }).pipe(Effect.map((result) => channelMessagesOf(channelId, result)))
  }
}
