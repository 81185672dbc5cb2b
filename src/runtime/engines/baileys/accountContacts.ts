import type { BaileysEventMap, Contact, WAMessage, WASocket } from "@whiskeysockets/baileys"
import { Duration, Effect, Option } from "effect"
import type { Dispatcher } from "undici"
import { EngineError, EngineEvent } from "../../Engine.js"
import type { AccountContactOperations, IdPair, InboundContactChange } from "../../EngineAccount.js"
import { fetchOptionsOf } from "./agents.js"
import { engineErrorOf, statusCodeOf } from "./disconnect.js"
import { isLidJid, isPhoneJid, type PhoneOfLid, personIdOf, senderIdsOf, toApiId, toWireJid } from "./jids.js"
import { aboutOf, pictureUrlOf } from "./profile.js"

/**
 * What the account knows of and does to other people through Baileys: their about text
 * (usync `status`), whether they are a business (`w:biz`), their pictures
 * (`w:profile:picture`, fetched over the session's own network agents), blocking
 * (`<iq xmlns=blocklist>`) and LID ↔ phone lookups (Baileys' LID mapping store, which asks
 * WhatsApp by usync for a phone number it does not know).
 *
 * Events: `contacts.update` (a picture changed or was removed, a new push name),
 * `blocklist.set` / `blocklist.update` (the account blocked someone on another device), and the
 * push names on incoming messages (rc14 emits no contact event for them) become `ContactsChanged`.
 */

export type AccountContactSocket = Pick<WASocket, "fetchStatus" | "getBusinessProfile" | "profilePictureUrl" | "updateBlockStatus" | "fetchBlocklist"> & {
  readonly signalRepository: {
    readonly lidMapping: Pick<WASocket["signalRepository"]["lidMapping"], "getLIDForPN">
  }
}

/** The push names the connection has seen, by API id (phone and LID alike). */
export class PushNames {
  private readonly names = new Map<string, string>()

  of(chatId: string): string | null {
    return this.names.get(chatId) ?? null
  }

  /** Keeps `name` for every id given; true when it is news for any of them. */
  learn(ids: ReadonlyArray<string | null>, name: string): boolean {
    let news = false
    for (const id of ids) {
      if (id === null || this.names.get(id) === name) continue
      this.names.set(id, name)
      news = true
    }
    return news
  }
}

const refuse = (refusal: "not_found" | "invalid", code: string, message: string) =>
  new EngineError({ code, message: `baileys: ${message}`, transient: false, refusal })

const personJid = (chatId: string) => {
  const jid = toWireJid(chatId)
  return isPhoneJid(jid) || isLidJid(jid) ? Effect.succeed(jid) : Effect.fail(refuse("invalid", "NOT_A_PERSON", `${chatId} does not name a person`))
}

/** Baileys' `updateBlockStatus` throws a 400 when the LID mapping cannot name the person. */
const blockErrorOf = (chatId: string) => (error: unknown) =>
  statusCodeOf(error) === 400 && /unable to resolve/i.test(error instanceof Error ? error.message : "")
    ? refuse("not_found", "CONTACT_NOT_FOUND", `WhatsApp knows no account ${chatId}`)
    : engineErrorOf("BLOCK", error)

const PICTURE_TIMEOUT = Duration.seconds(30)

export const makeAccountContactOperations = (
  sock: AccountContactSocket,
  context: { readonly phoneOfLid: PhoneOfLid; readonly pushNames: PushNames; readonly dispatcher: Dispatcher | undefined }
): AccountContactOperations => {
  const apiIdOf = (jid: string) => Effect.map(personIdOf(jid, null, context.phoneOfLid), (id) => id ?? jid)
  return {
    profile: (chatId) =>
      Effect.gen(function*() {
        const jid = yield* personJid(chatId)
        const [about, business] = yield* Effect.all([
          aboutOf(sock, jid, "CONTACT_PROFILE"),
          Effect.tryPromise({ try: () => sock.getBusinessProfile(jid), catch: (error) => engineErrorOf("CONTACT_PROFILE", error) })
        ], { concurrency: 2 })
        if (about === undefined) return yield* refuse("not_found", "CONTACT_NOT_FOUND", `WhatsApp knows no account ${chatId}`)
        return { pushName: context.pushNames.of(chatId), about, isBusiness: business !== undefined && business !== null }
      }),
    pictureUrl: (chatId) => pictureUrlOf(sock, toWireJid(chatId), "PICTURE"),
    downloadPicture: (url) =>
      Effect.tryPromise({
        try: async (signal) => {
          const response = await fetch(url, { ...fetchOptionsOf(context.dispatcher), signal })
          if (!response.ok) return response.status
          return new Uint8Array(await response.arrayBuffer())
        },
        catch: (error) => engineErrorOf("PICTURE_DOWNLOAD", error)
      }).pipe(
        Effect.timeoutFail({ duration: PICTURE_TIMEOUT, onTimeout: () => new EngineError({ code: "PICTURE_DOWNLOAD_TIMEOUT", message: "baileys: the picture did not come within 30 s", transient: true }) }),
        Effect.flatMap((body) =>
          typeof body !== "number"
            ? Effect.succeed(body)
            : body === 404 || body === 410
            ? Effect.fail(refuse("not_found", "PICTURE_GONE", `the picture is no longer there (${body})`))
            : Effect.fail(new EngineError({ code: `PICTURE_DOWNLOAD_FAILED_${body}`, message: `baileys: the picture server answered ${body}`, transient: body >= 500 }))
        )
      ),
    setBlocked: (chatId, blocked) =>
      Effect.flatMap(personJid(chatId), (jid) =>
        Effect.tryPromise({ try: () => sock.updateBlockStatus(jid, blocked ? "block" : "unblock"), catch: blockErrorOf(chatId) })),
    blocklist: Effect.tryPromise({ try: () => sock.fetchBlocklist(), catch: (error) => engineErrorOf("BLOCKLIST", error) }).pipe(
      Effect.flatMap((jids) => Effect.forEach(jids.filter((jid): jid is string => typeof jid === "string"), apiIdOf))
    ),
    resolveIds: (chatId) =>
      Effect.gen(function*() {
        const jid = yield* personJid(chatId)
        if (isLidJid(jid)) {
          const phone = yield* context.phoneOfLid(jid)
          return { lid: toApiId(jid), phone: Option.getOrNull(Option.flatMapNullable(phone, toApiId)) } satisfies IdPair
        }
        // the mapping store asks WhatsApp (usync, LID protocol) for a number it does not know
        const lid = yield* Effect.tryPromise({ try: () => sock.signalRepository.lidMapping.getLIDForPN(jid), catch: (error) => engineErrorOf("LID_LOOKUP", error) })
        return { lid: toApiId(lid), phone: toApiId(jid) } satisfies IdPair
      })
  }
}

const changed = (changes: ReadonlyArray<InboundContactChange | null>): Array<EngineEvent> => {
  const known = changes.filter((change): change is InboundContactChange => change !== null)
  return known.length === 0 ? [] : [EngineEvent.ContactsChanged({ changes: known })]
}

/**
 * `contacts.update`: a picture notification (`imgUrl` "changed" / "removed") or a push name
 * (`notify`). Groups' pictures are not people's: left out.
 */
export const fromContactUpdates = (updates: ReadonlyArray<Partial<Contact>>, phoneOfLid: PhoneOfLid, pushNames: PushNames) =>
  Effect.map(
    Effect.forEach(updates, (update) =>
      Effect.gen(function*() {
        const alt = update.phoneNumber ?? update.lid
        const chatId = yield* personIdOf(update.id, alt, phoneOfLid)
        if (chatId === null) return null
        const change: { -readonly [K in keyof InboundContactChange]: InboundContactChange[K] } = { chatId }
        if (update.imgUrl === "changed" || update.imgUrl === "removed") change.picture = update.imgUrl
        const name = update.notify
        if (typeof name === "string" && name !== "" && pushNames.learn([chatId, toApiId(update.id)], name)) change.pushName = name
        return Object.keys(change).length > 1 ? change : null
      })),
    changed
  )

/** `blocklist.update` (and `blocklist.set`, which only adds): who the account (un)blocked elsewhere. */
export const fromBlocklist = (
  event: BaileysEventMap["blocklist.update"] | BaileysEventMap["blocklist.set"],
  phoneOfLid: PhoneOfLid
) =>
  Effect.map(
    Effect.forEach(event.blocklist, (jid) =>
      Effect.map(personIdOf(jid, null, phoneOfLid), (chatId) =>
        chatId === null ? null : { chatId, blocked: !("type" in event) || event.type === "add" })),
    changed
  )

/** The push names incoming messages carry: a change for each sender whose name is news. */
export const fromMessagePushNames = (upsert: BaileysEventMap["messages.upsert"], phoneOfLid: PhoneOfLid, pushNames: PushNames) =>
  Effect.map(
    Effect.forEach(upsert.messages, (message: WAMessage) =>
      Effect.gen(function*() {
        const name = message.pushName
        if (message.key.fromMe || typeof name !== "string" || name === "") return null
        const ids = yield* senderIdsOf(message.key, phoneOfLid)
        if (ids === null || !pushNames.learn([ids.from, ids.fromPhone, ids.fromLid], name)) return null
        return { chatId: ids.from, pushName: name }
      })),
    changed
  )
