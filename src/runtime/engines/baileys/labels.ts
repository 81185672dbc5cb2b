import type { AuthenticationCreds, BaileysEventMap, WASocket } from "@whiskeysockets/baileys"
import { Effect } from "effect"
import type { Label } from "../../../domain/Label.js"
import { EngineError, EngineEvent } from "../../Engine.js"
import type { LabelOperations } from "../../EngineDirectory.js"
import { iqFailureOf } from "./disconnect.js"
import { isGroupJid, noPhoneLookup, type PhoneOfLid, personIdOf, toApiId, toWireJid } from "./jids.js"

/**
 * Labels (WhatsApp Business) through Baileys. Labels live in the account's app state: `addLabel`,
 * `addChatLabel`, `removeChatLabel` write an encrypted patch of the `regular` collection
 * (`chatModify` → `appPatch`), which needs the app-state keys the phone shares after linking
 * (`creds.myAppStateKeyId`; without it Baileys throws "App state key not present!"). `addLabel`
 * returns nothing: the label's id is the caller's choice — WhatsApp numbers labels 1, 2, 3…, so
 * a new one takes the next number after those the connection has heard of (`labels.edit`
 * replays them all in the app-state sync after login).
 *
 * Events: `labels.edit` (a label created, renamed, recoloured or deleted) and
 * `labels.association` (a label put on / taken off a chat or a message; chats only here).
 */

export type LabelSocket = Pick<WASocket, "addLabel" | "addChatLabel" | "removeChatLabel" | "getBusinessProfile">
export type LabelCreds = Pick<AuthenticationCreds, "platform" | "me">

/**
 * The platform the phone's app announced at pairing (`<pair-success><platform name>`): the
 * WhatsApp Business apps are `smba` (Android) and `smbi` (iOS), the consumer ones `android` and
 * `iphone`. Anything else is asked of the server (a business profile exists or not).
 */
const businessPlatforms = new Set(["smba", "smbi"])
const consumerPlatforms = new Set(["android", "iphone"])

/** The labels this connection has heard of, for the next id and colour. */
export class LabelRegistry {
  private readonly labels = new Map<string, Label>()

  learn(label: Label): void {
    this.labels.set(label.id, label)
  }

  forget(id: string): void {
    this.labels.delete(id)
  }

  nextId(): string {
    const numbers = [...this.labels.keys()].map(Number).filter(Number.isInteger)
    return `${Math.max(0, ...numbers) + 1}`
  }

  /** WhatsApp cycles through its 20 colours. */
  nextColor(): number {
    return this.labels.size % 20
  }
}

const refuse = (refusal: "conflict", code: string, message: string, transient = false) =>
  new EngineError({ code, message: `baileys: ${message}`, transient, refusal })

export const notABusiness = () =>
  refuse("conflict", "NOT_A_BUSINESS_ACCOUNT", "labels exist on WhatsApp Business accounts only")

/** Baileys' app-state failures (labels, stars): no keys yet is a state of the account, worth retrying later. */
export const appStateErrorOf = (operation: string) => (error: unknown): EngineError =>
  error instanceof Error && /app state key not present/i.test(error.message)
    ? refuse("conflict", "APP_STATE_NOT_READY", "the phone has not shared its app-state keys yet; try again shortly", true)
    : iqFailureOf(operation, error)

export const makeLabelOperations = (sock: LabelSocket, creds: () => LabelCreds, registry: LabelRegistry): LabelOperations => {
  let business: boolean | undefined
  const isBusiness = Effect.suspend(() => {
    if (business !== undefined) return Effect.succeed(business)
    const platform = creds().platform
    if (platform !== undefined && businessPlatforms.has(platform)) return Effect.succeed(true)
    if (platform !== undefined && consumerPlatforms.has(platform)) return Effect.succeed(false)
    const me = creds().me?.id
    if (me === undefined) return Effect.succeed(false)
    return Effect.tryPromise({ try: () => sock.getBusinessProfile(me), catch: (error) => iqFailureOf("BUSINESS_PROFILE", error) }).pipe(
      Effect.map((profile) => profile !== undefined && profile !== null)
    )
  }).pipe(Effect.tap((known) => Effect.sync(() => void (business = known))))

  /** A label operation: refused on consumer accounts, its failure as an engine error. */
  const patch = <A>(operation: string, run: () => Promise<A>) =>
    Effect.flatMap(isBusiness, (yes) =>
      yes ? Effect.tryPromise({ try: run, catch: appStateErrorOf(operation) }) : Effect.fail(notABusiness()))

  return {
    create: (name, color) =>
      Effect.suspend(() => {
        const label: Label = { id: registry.nextId(), name, color: color ?? registry.nextColor() }
        // taken at once, so a create running alongside picks the next number
        registry.learn(label)
        // the chat JID plays no part in a label_edit patch
        return patch("LABEL_CREATE", () => sock.addLabel("", { ...label, deleted: false })).pipe(
          Effect.tapError(() => Effect.sync(() => registry.forget(label.id))),
          Effect.as(label)
        )
      }),
    addToChat: (chatId, labelId) => patch("LABEL_CHAT_ADD", () => sock.addChatLabel(toWireJid(chatId), labelId)),
    removeFromChat: (chatId, labelId) => patch("LABEL_CHAT_REMOVE", () => sock.removeChatLabel(toWireJid(chatId), labelId))
  }
}

/** `labels.edit` → a label as it is now (or deleted). */
export const fromLabelEdit = (edit: BaileysEventMap["labels.edit"], registry: LabelRegistry): Array<EngineEvent> => {
  const label: Label = { id: edit.id, name: edit.name ?? "", color: edit.color ?? 0 }
  registry.learn(label)
  return [EngineEvent.LabelChanged({ change: { kind: "label", label, deleted: edit.deleted === true } })]
}

/** `labels.association` on a chat → the chat (in API form) and the label, added or removed. */
export const fromLabelAssociation = (event: BaileysEventMap["labels.association"], phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    const { association, type } = event
    // LabelAssociationType.Chat (rc14 does not export the enum)
    if (String(association.type) !== "label_jid") return []
    const chatId = isGroupJid(association.chatId) ? toApiId(association.chatId) : yield* personIdOf(association.chatId, undefined, phoneOfLid)
    if (chatId === null) return []
    return [EngineEvent.LabelChanged({ change: { kind: "association", chatId, labelId: association.labelId, added: type === "add" } })]
  })
