/**
 * The server's answers to the `<iq xmlns=w:g2>` queries Baileys sends (lib/Socket/groups.js):
 * to `@g.us` — create, participating, leave, invite (accept / info); to `<id>@g.us` — query,
 * add/remove/promote/demote, subject, description, invite (get / revoke), settings; join rules and
 * requests in ./group-requests.ts. A refusal is
 * `<iq type=error><error code text>`, which Baileys throws as `Boom(text, { data: code })`.
 */
import { getBinaryNodeChild, getBinaryNodeChildren, jidDecode, type BinaryNode } from "@whiskeysockets/baileys"
import { forbidden, GroupError, groupNode, type GroupDirectory } from "./groups.js"
import { answerJoinRulesIq } from "./group-requests.js"
import type { Account } from "./pairing.js"
import type { Entity, Resolve } from "./stanzas.js"

/** Answer a client's `<iq xmlns=w:g2>`: the reply (a result or an error). */
export const answerGroupIq = (directory: GroupDirectory, resolve: Resolve, account: Account, iq: BinaryNode): BinaryNode => {
  const op = Array.isArray(iq.content) ? (iq.content[0]?.tag ?? "") : ""
  directory.queries.push({ from: account.phone, op, to: iq.attrs.to ?? "" })
  try {
    const content = handle(directory, resolve, { kind: "account", account }, iq)
    return { tag: "iq", attrs: { from: iq.attrs.to ?? "@g.us", type: "result", id: iq.attrs.id ?? "" }, ...(content.length ? { content } : {}) }
  } catch (error) {
    if (!(error instanceof GroupError)) throw error
    return {
      tag: "iq",
      attrs: { from: iq.attrs.to ?? "@g.us", type: "error", id: iq.attrs.id ?? "" },
      content: [{ tag: "error", attrs: { code: `${error.code}`, text: error.text } }]
    }
  }
}

const handle = (directory: GroupDirectory, resolve: Resolve, me: Entity, iq: BinaryNode): BinaryNode[] => {
  const child = Array.isArray(iq.content) ? iq.content[0] : undefined
  if (!child) throw new GroupError(400, "bad-request")
  const participants = () =>
    getBinaryNodeChildren(child, "participant").map(({ attrs }) => {
      const user = jidDecode(attrs.jid ?? "")?.user
      return { jid: attrs.jid ?? "", entity: user ? resolve(user) : undefined }
    })
  if (iq.attrs.to === "@g.us") {
    switch (child.tag) {
      case "create": {
        const members = participants().flatMap(p => (p.entity ? [p.entity] : []))
        return [groupNode(directory.create(me, child.attrs.subject ?? "", members))]
      }
      case "participating":
        return [{ tag: "groups", attrs: {}, content: [...directory.groups.values()].filter(g => g.roleOf(me)).map(groupNode) }]
      case "leave":
        for (const { attrs } of getBinaryNodeChildren(child, "group")) directory.leave(directory.get(attrs.id ?? ""), me)
        return [child]
      case "invite": {
        const code = child.attrs.code ?? ""
        if (iq.attrs.type === "get") return [groupNode(directory.byCode(code))] // invite info
        return [{ tag: "group", attrs: { jid: directory.join(code, me).jid } }]
      }
    }
    throw new GroupError(400, "bad-request")
  }
  const group = directory.get(iq.attrs.to ?? "")
  if (!group.roleOf(me)) throw forbidden()
  switch (child.tag) {
    case "query":
      return [groupNode(group)]
    case "add":
    case "remove":
    case "promote":
    case "demote": {
      const results = directory.updateParticipants(group, me, child.tag, participants())
      const content = results.map(({ jid, error }) => ({ tag: "participant", attrs: { jid, ...(error ? { error } : {}) } }))
      return [{ tag: child.tag, attrs: {}, content }]
    }
    case "subject":
      directory.setSubject(group, me, child.content instanceof Uint8Array ? Buffer.from(child.content).toString() : `${child.content ?? ""}`)
      return []
    case "description": {
      const body = getBinaryNodeChild(child, "body")?.content
      const text = child.attrs.delete === "true" || !(body instanceof Uint8Array) ? "" : Buffer.from(body).toString()
      directory.setDescription(group, me, text, child.attrs.prev)
      return []
    }
    case "invite":
      return [{ tag: "invite", attrs: { code: iq.attrs.type === "set" ? directory.revokeInvite(group, me) : directory.inviteCode(group, me) } }]
    case "announcement":
    case "not_announcement":
      directory.setSettings(group, me, { announce: child.tag === "announcement" })
      return []
    case "locked":
    case "unlocked":
      directory.setSettings(group, me, { restrict: child.tag === "locked" })
      return []
  }
  return answerJoinRulesIq(directory, resolve, me, group, child) ?? [] // ephemeral, …: accepted, not modelled
}
