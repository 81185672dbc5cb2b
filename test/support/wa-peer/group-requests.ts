/**
 * Who may join a group on the peer, and how: the member-add mode, join approval, and the join
 * requests admins answer. The clients' `w:g2` iqs (lib/Socket/groups.js) — `<member_add_mode>`,
 * `<membership_approval_mode><group_join state>`, `<membership_approval_requests>` (get),
 * `<membership_requests_action><approve|reject>` (set) — are answered here for ./group-iq.ts; the
 * notifications they cause are the ones Baileys turns into `groups.update { memberAddMode |
 * joinApprovalMode }`, `group.join-request` and `group-participants.update`.
 *
 * A contact asks to join through the test: `requestJoin(peer.groups, group, peer.member(CAROL))`
 * tells the group's admin accounts `<created_membership_requests>`; `cancelJoinRequest` takes it
 * back (`<revoked_membership_requests>` by the requester: Baileys says "revoked").
 */
import { getBinaryNodeChild, getBinaryNodeChildren, jidDecode, type BinaryNode } from "@whiskeysockets/baileys"
import { GroupError, lidUserOf, participantNode, phoneOf, type GroupDirectory, type PeerGroup } from "./groups.js"
import { lidJid, pnJid } from "./pairing.js"
import type { Entity, Resolve } from "./stanzas.js"

const now = (): number => Math.floor(Date.now() / 1000)

/** Someone asks to join a group that wants approval; its admins hear of it. */
export const requestJoin = (directory: GroupDirectory, group: PeerGroup, entity: Entity, method = "invite_link"): void => {
  if (!group.approval) throw new Error(`${group.jid} does not ask for approval: join it instead`)
  if (group.roleOf(entity)) throw new Error("already a member")
  group.requests.set(lidUserOf(entity), { entity, method, time: now() })
  directory.notify(group, entity, { tag: "created_membership_requests", attrs: { request_method: method }, content: [participantNode(entity)] }, [], true)
}

/** The requester takes the request back. */
export const cancelJoinRequest = (directory: GroupDirectory, group: PeerGroup, entity: Entity): void => {
  if (!group.requests.delete(lidUserOf(entity))) throw new Error("no such request")
  directory.notify(group, entity, { tag: "revoked_membership_requests", attrs: {}, content: [participantNode(entity)] }, [], true)
}

const requestNode = ({ entity, method, time }: { entity: Entity; method: string; time: number }): BinaryNode => ({
  tag: "membership_approval_request",
  attrs: { jid: lidJid(lidUserOf(entity)), phone_number: pnJid(phoneOf(entity)), request_method: method, request_time: `${time}` }
})

/** Approve (they become members) or reject pending requests; a person with none gets 404. */
const answer = (directory: GroupDirectory, group: PeerGroup, actor: Entity, action: "approve" | "reject", child: BinaryNode, resolve: Resolve): BinaryNode => {
  const decided: Entity[] = []
  const results = getBinaryNodeChildren(child, "participant").map(({ attrs }): BinaryNode => {
    const jid = attrs.jid ?? ""
    const user = jidDecode(jid)?.user
    const entity = user ? resolve(user) : undefined
    const request = entity && group.requests.get(lidUserOf(entity))
    if (!entity || !request) return { tag: "participant", attrs: { jid, error: "404" } }
    group.requests.delete(lidUserOf(entity))
    if (action === "approve") group.members.set(lidUserOf(entity), { entity, role: "member" })
    decided.push(entity)
    return { tag: "participant", attrs: { jid } }
  })
  if (decided.length > 0) {
    const content = decided.map(entity => participantNode(entity))
    if (action === "approve") directory.notify(group, actor, { tag: "add", attrs: { reason: "membership_approval" }, content })
    else for (const node of content) directory.notify(group, actor, { tag: "revoked_membership_requests", attrs: {}, content: [node] }, [], true)
  }
  return { tag: "membership_requests_action", attrs: {}, content: [{ tag: action, attrs: {}, content: results }] }
}

/** The answer to a join-rules iq on a group the account is in, or undefined when `child` is none. */
export const answerJoinRulesIq = (directory: GroupDirectory, resolve: Resolve, me: Entity, group: PeerGroup, child: BinaryNode): BinaryNode[] | undefined => {
  switch (child.tag) {
    case "member_add_mode": {
      directory.requireAdmin(group, me)
      const mode = child.content instanceof Uint8Array ? Buffer.from(child.content).toString() : `${child.content ?? ""}`
      if (mode !== "admin_add" && mode !== "all_member_add") throw new GroupError(400, "bad-request")
      if (mode !== group.memberAddMode) {
        group.memberAddMode = mode
        directory.notify(group, me, { tag: "member_add_mode", attrs: {}, content: mode })
      }
      return []
    }
    case "membership_approval_mode": {
      directory.requireAdmin(group, me)
      const state = getBinaryNodeChild(child, "group_join")?.attrs.state
      if (state !== "on" && state !== "off") throw new GroupError(400, "bad-request")
      if ((state === "on") !== group.approval) {
        group.approval = state === "on"
        directory.notify(group, me, { tag: "membership_approval_mode", attrs: {}, content: [{ tag: "group_join", attrs: { state } }] })
      }
      return []
    }
    case "membership_approval_requests":
      directory.requireAdmin(group, me)
      return [{ tag: "membership_approval_requests", attrs: {}, content: [...group.requests.values()].map(requestNode) }]
    case "membership_requests_action": {
      directory.requireAdmin(group, me)
      const action = Array.isArray(child.content) ? child.content[0] : undefined
      if (action?.tag !== "approve" && action?.tag !== "reject") throw new GroupError(400, "bad-request")
      return [answer(directory, group, me, action.tag, action, resolve)]
    }
  }
  return undefined
}
