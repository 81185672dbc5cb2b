/**
 * The socket boundary of the Baileys directory adapters: a stub socket that has only the
 * methods a test gives it, WhatsApp's iq errors and group metadata as Baileys itself parses
 * them, and the ids the suites share.
 */
import { assertNodeErrorFree, type BinaryNode, type GroupMetadata } from "@whiskeysockets/baileys"
import { extractGroupMetadata } from "@whiskeysockets/baileys/lib/Socket/groups.js"
import { Effect, Option } from "effect"
import type { EngineError, EngineEvent } from "../../src/runtime/Engine.js"
import type { GroupChange } from "../../src/runtime/EngineDirectory.js"
import type { PhoneOfLid } from "../../src/runtime/engines/baileys/jids.js"

export const ALICE = "15551230001"
export const BOB = "15551230002"
export const CAROL = "15551230003"
export const ALICE_LID = "111111111111111@lid"
export const BOB_LID = "222222222222222@lid"
export const CAROL_LID = "333333333333333@lid"
export const GROUP = "120363012345678901@g.us"
export const T = 1_717_000_000

/** A socket that has only the methods given; any other call fails the test. */
export const stub = <S extends object>(methods: Partial<S>): S =>
  new Proxy(methods, {
    get: (target, name) => (target as Record<string | symbol, unknown>)[name] ?? (() => { throw new Error(`unexpected call: ${String(name)}`) })
  }) as S

/** What Baileys throws for `<iq type=error><error code text/>`. */
export const iqError = (code: number, text: string): unknown => {
  try {
    assertNodeErrorFree({ tag: "iq", attrs: { type: "error" }, content: [{ tag: "error", attrs: { code: `${code}`, text } }] })
  } catch (error) {
    return error
  }
  throw new Error("assertNodeErrorFree did not throw")
}

/** A `<group>` as WhatsApp sends it for a LID-addressed group, parsed by Baileys itself. */
export const metadata = (options: { participants?: Array<Record<string, string>>; desc?: string; announce?: boolean } = {}): GroupMetadata =>
  extractGroupMetadata({
    tag: "iq",
    attrs: {},
    content: [{
      tag: "group",
      attrs: {
        id: GROUP.split("@")[0]!,
        creator: ALICE_LID,
        creator_pn: `${ALICE}@s.whatsapp.net`,
        creation: `${T}`,
        subject: "Team",
        s_t: `${T}`,
        s_o: ALICE_LID,
        addressing_mode: "lid"
      },
      content: [
        ...(options.desc === undefined ? [] : [{ tag: "description", attrs: { id: "D1" }, content: [{ tag: "body", attrs: {}, content: Buffer.from(options.desc) }] }]),
        ...(options.announce ? [{ tag: "announcement", attrs: {} }] : []),
        ...(options.participants ?? [
          { jid: ALICE_LID, phone_number: `${ALICE}@s.whatsapp.net`, type: "superadmin" },
          { jid: BOB_LID, phone_number: `${BOB}@s.whatsapp.net` },
          { jid: CAROL_LID, type: "admin" }
        ]).map((attrs) => ({ tag: "participant", attrs }))
      ]
    }]
  } as BinaryNode)

export const mapping = (known: Record<string, string>): PhoneOfLid => (lid) => Effect.succeed(Option.fromNullable(known[lid]))

export const refusalOf = (error: EngineError) => ({ code: error.code, refusal: error.refusal, transient: error.transient })

export const changeOf = (event: EngineEvent | undefined): GroupChange => {
  if (event?._tag !== "GroupChanged") throw new Error(`expected GroupChanged, got ${event?._tag}`)
  return event.change
}
