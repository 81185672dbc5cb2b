/**
 * The client's `<iq>` requests and the peer's answers. Anything not listed gets an empty
 * `type=result`, so Baileys never waits for a query timeout.
 */
import { getBinaryNodeChild, getBinaryNodeChildren, type BinaryNode } from "@whiskeysockets/baileys"
import type { Connection } from "./connection.js"
import type { Account } from "./pairing.js"
import { parseCompanionHello } from "./pairing-code.js"
import type { ProfileDirectory } from "./profiles.js"
import { keysResult, privacyResult, result, usyncResult, type Entity } from "./stanzas.js"

/**
 * A client's ask for other users' Signal keys or devices: `<iq xmlns=encrypt><key>` hands out one
 * of each user's one-time prekeys (a new session; `reason=identity` when the client re-keys
 * sessions it had), `<iq xmlns=usync>` with the `devices` protocol lists their devices.
 */
export interface KeyQuery {
  readonly kind: "prekeys" | "devices"
  /** the asking account's phone */
  readonly phone: string
  /** the users asked about, as the client wrote them (`<user>@lid`, `<phone>@s.whatsapp.net`) */
  readonly jids: readonly string[]
  /** `identity` when the client forced new sessions over existing ones */
  readonly reason: string | undefined
}

export interface IqHost {
  resolve(user: string): Entity | undefined
  /** the client finished its login queries (the digest check comes last) */
  afterLogin(conn: Connection, account: Account): Promise<void>
  emit(event: "pairing-code", phone: string): boolean
  /** the `<media_conn>` that sends uploads and downloads to the peer's media server */
  mediaConn(): BinaryNode
  /** the answer to a `w:g2` (groups) query */
  groupIq(account: Account, iq: BinaryNode): BinaryNode
  /** abouts, pictures, business profiles, blocklists */
  readonly profiles: ProfileDirectory
  /** every key and device query of the clients, in order */
  readonly keyQueries: KeyQuery[]
}

const usersOf = (parent: BinaryNode | undefined): BinaryNode[] => getBinaryNodeChildren(parent, "user")

/** Login sequence: prekey count → (prekey upload) → passive active → digest → `open`. */
export const answerIq = async (peer: IqHost, conn: Connection, iq: BinaryNode): Promise<void> => {
  const { type, xmlns } = iq.attrs
  if (type === "result" || type === "error") return
  const account = conn.account
  const child = Array.isArray(iq.content) ? iq.content[0] : undefined
  if (!account) {
    if (xmlns === "md" && child?.tag === "link_code_companion_reg") {
      if (child.attrs.stage === "companion_finish") {
        conn.send(result(iq))
        return conn.linkCode?.finish?.(iq)
      }
      const hello = parseCompanionHello(iq)
      if (hello && conn.registration) {
        conn.linkCode = hello
        const ref: BinaryNode = { tag: "link_code_pairing_ref", attrs: {}, content: Buffer.from(hello.ref) }
        conn.send(result(iq, [{ tag: "link_code_companion_reg", attrs: {}, content: [ref] }]))
        peer.emit("pairing-code", hello.phone)
        return
      }
    }
    return conn.send(result(iq))
  }
  if (xmlns === "encrypt" && child?.tag === "count") {
    return conn.send(result(iq, [{ tag: "count", attrs: { value: `${account.clientKeys.preKeys.size}` } }]))
  }
  if (xmlns === "encrypt" && type === "set" && getBinaryNodeChild(iq, "list")) {
    account.clientKeys.upload(iq)
    return conn.send(result(iq))
  }
  if (xmlns === "encrypt" && child?.tag === "rotate") {
    account.clientKeys.upload(child)
    return conn.send(result(iq))
  }
  if (xmlns === "encrypt" && child?.tag === "digest") {
    conn.send(result(iq, [{ tag: "digest", attrs: {} }]))
    return peer.afterLogin(conn, account)
  }
  if (xmlns === "encrypt" && child?.tag === "key") {
    const users = usersOf(child)
    peer.keyQueries.push({ kind: "prekeys", phone: account.phone, jids: users.map(u => u.attrs.jid ?? ""), reason: users[0]?.attrs.reason })
    return conn.send(keysResult(iq, user => peer.resolve(user)))
  }
  if (xmlns === "usync") {
    const usync = getBinaryNodeChild(iq, "usync")
    if (getBinaryNodeChild(getBinaryNodeChild(usync, "query"), "devices")) {
      const jids = usersOf(getBinaryNodeChild(usync, "list")).map(u => u.attrs.jid ?? "")
      peer.keyQueries.push({ kind: "devices", phone: account.phone, jids, reason: undefined })
    }
    return conn.send(usyncResult(iq, account, user => peer.resolve(user), entity => peer.profiles.statusNode(entity)))
  }
  if (xmlns === "w:g2") return conn.send(peer.groupIq(account, iq))
  if (xmlns === "w:m" && child?.tag === "media_conn") return conn.send(result(iq, [peer.mediaConn()]))
  if (xmlns === "privacy" && type === "get") return conn.send(privacyResult(iq))
  const profile = peer.profiles.answer(account, iq)
  if (profile) return conn.send(profile)
  if (xmlns === "md" && child?.tag === "remove-companion-device") {
    account.linked = false
    conn.send(result(iq))
    return
  }
  conn.send(result(iq))
}
