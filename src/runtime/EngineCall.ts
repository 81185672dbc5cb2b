// By their own paths: the package's index would bring its servers, clients and serializers
// into every start's bundle, where only the cluster (loaded on demand) uses them.
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import { type Effect, Record, Schema } from "effect"
import { Channel, ChannelMessage } from "../domain/Channel.js"
import { ContactCheck } from "../domain/Contact.js"
import { Conflict, EngineFailure, EngineTimeout, Forbidden, NotFound, NotSupported, ValidationFailed } from "../domain/Errors.js"
import { Group, JoinRequest, MemberAddMode, ParticipantAction, ParticipantResult } from "../domain/Group.js"
import { Label } from "../domain/Label.js"
import { MessageType } from "../domain/Message.js"
import type { SessionStatus } from "../domain/Session.js"
import type { EngineConnection, EngineError } from "./Engine.js"

/**
 * The engine operations a session can be asked for from outside its actor, each with the
 * schemas of what it takes and what it answers, so that it can travel to the process holding
 * the session's connection (in a cluster, another runner) and come back checked. The list is
 * closed: what a caller can name is an `EngineOperation`, and a runner answers only the Rpcs
 * of its entity's protocol. `send`, `logout` and `downloadMedia` are not here: the actor runs
 * those itself.
 */

/** Every way an engine call can be refused, as the HTTP API reports it. */
export const CallFailure = Schema.Union(Conflict, EngineFailure, NotFound, Forbidden, NotSupported, ValidationFailed, EngineTimeout)

const operation = <const Tag extends string, Payload extends Schema.Struct.Fields, Success extends Schema.Schema.Any>(
  tag: Tag,
  payload: Payload,
  success: Success
) => Rpc.make(tag, { payload, success, error: CallFailure })

const groupId = { groupId: Schema.String }
const MessageTarget = Schema.Struct({ engineMessageId: Schema.String, fromMe: Schema.Boolean, from: Schema.String })
const targetInChat = { chatId: Schema.String, target: MessageTarget }
const PollDefinition = Schema.Struct({
  name: Schema.String,
  options: Schema.Array(Schema.String),
  selectableCount: Schema.Number,
  secret: Schema.NullOr(Schema.Uint8ArrayFromBase64)
})
const ChatAnchor = Schema.Struct({ target: MessageTarget, timestamp: Schema.Date })
const ChatModification = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("archive"), archived: Schema.Boolean }),
  Schema.Struct({ kind: Schema.Literal("pin"), pinned: Schema.Boolean }),
  Schema.Struct({ kind: Schema.Literal("mute"), until: Schema.NullOr(Schema.Date) }),
  Schema.Struct({ kind: Schema.Literal("markUnread") }),
  Schema.Struct({ kind: Schema.Literal("delete") })
)
const channelId = { channelId: Schema.String }
const chatLabel = { chatId: Schema.String, labelId: Schema.String }

export const EngineRpcs = RpcGroup.make(
  operation("GroupsCreate", { subject: Schema.String, participants: Schema.Array(Schema.String) }, Group),
  operation("GroupsGet", groupId, Group),
  operation("GroupsList", {}, Schema.Array(Group)),
  operation(
    "GroupsUpdateParticipants",
    { ...groupId, participants: Schema.Array(Schema.String), action: ParticipantAction },
    Schema.Array(ParticipantResult)
  ),
  operation("GroupsSetSubject", { ...groupId, subject: Schema.String }, Schema.Void),
  operation("GroupsSetDescription", { ...groupId, description: Schema.String }, Schema.Void),
  operation("GroupsLeave", groupId, Schema.Void),
  operation("GroupsInviteCode", groupId, Schema.String),
  operation("GroupsRevokeInvite", groupId, Schema.String),
  operation("GroupsJoin", { code: Schema.String }, Schema.String),
  operation("ChannelsCreate", { name: Schema.String, description: Schema.NullOr(Schema.String) }, Channel),
  operation("ChannelsGet", channelId, Channel),
  operation("ChannelsDelete", channelId, Schema.Void),
  operation(
    "ChannelsSubscribe",
    { target: Schema.Union(Schema.Struct(channelId), Schema.Struct({ inviteCode: Schema.String })) },
    Channel
  ),
  operation("ChannelsUnsubscribe", channelId, Schema.Void),
  operation("ChannelsMessages", { ...channelId, count: Schema.Number }, Schema.Array(ChannelMessage)),
  operation("LabelsCreate", { name: Schema.String, color: Schema.NullOr(Schema.Number) }, Label),
  operation("LabelsAddToChat", chatLabel, Schema.Void),
  operation("LabelsRemoveFromChat", chatLabel, Schema.Void),
  operation("ContactsCheck", { phones: Schema.Array(Schema.String) }, Schema.Array(ContactCheck)),
  operation("RequestPairingCode", { phoneNumber: Schema.String }, Schema.String),
  operation("MarkRead", { chatId: Schema.String, engineMessageIds: Schema.Array(Schema.String) }, Schema.Void),
  operation("React", { ...targetInChat, emoji: Schema.String }, Schema.Void),
  operation("MessageEdit", { ...targetInChat, type: MessageType, text: Schema.String }, Schema.Void),
  operation("MessageRevoke", targetInChat, Schema.Void),
  operation("MessageStar", { ...targetInChat, starred: Schema.Boolean }, Schema.Void),
  operation("MessagePin", { ...targetInChat, pinned: Schema.Boolean, durationSeconds: Schema.Number }, Schema.Void),
  operation("PollVote", { ...targetInChat, poll: PollDefinition, options: Schema.Array(Schema.String) }, Schema.Void),
  operation(
    "PresenceSet",
    {
      command: Schema.Union(
        Schema.Struct({ state: Schema.Literal("online", "offline") }),
        Schema.Struct({ chatId: Schema.String, state: Schema.Literal("typing", "recording", "paused") })
      )
    },
    Schema.Void
  ),
  operation("PresenceSubscribe", { chatId: Schema.String }, Schema.Void),
  operation("ChatsModify", { chatId: Schema.String, modification: ChatModification, newest: Schema.NullOr(ChatAnchor) }, Schema.Void),
  operation("ChatsRequestHistory", { chatId: Schema.String, count: Schema.Number, oldest: Schema.NullOr(ChatAnchor) }, Schema.Void),
  operation("ProfileGet", {}, Schema.Struct({ name: Schema.NullOr(Schema.String), about: Schema.NullOr(Schema.String), pictureUrl: Schema.NullOr(Schema.String) })),
  operation("ProfileSetName", { name: Schema.String }, Schema.Void),
  operation("ProfileSetAbout", { about: Schema.String }, Schema.Void),
  operation("ProfileSetPicture", { jpeg: Schema.NullOr(Schema.Uint8ArrayFromBase64) }, Schema.Void),
  operation("ContactsProfile", { chatId: Schema.String }, Schema.Struct({ pushName: Schema.NullOr(Schema.String), about: Schema.NullOr(Schema.String), isBusiness: Schema.Boolean })),
  operation("ContactsPictureUrl", { chatId: Schema.String }, Schema.NullOr(Schema.String)),
  operation("ContactsDownloadPicture", { url: Schema.String }, Schema.Uint8ArrayFromBase64),
  operation("ContactsSetBlocked", { chatId: Schema.String, blocked: Schema.Boolean }, Schema.Void),
  operation("ContactsBlocklist", {}, Schema.Array(Schema.String)),
  operation("ContactsResolveIds", { chatId: Schema.String }, Schema.Struct({ lid: Schema.NullOr(Schema.String), phone: Schema.NullOr(Schema.String) })),
  operation("CallsReject", { callId: Schema.String, from: Schema.String }, Schema.Void),
  operation(
    "GroupsSetSettings",
    {
      ...groupId,
      change: Schema.Struct({
        announce: Schema.optional(Schema.Boolean),
        restrict: Schema.optional(Schema.Boolean),
        memberAddMode: Schema.optional(MemberAddMode),
        approval: Schema.optional(Schema.Boolean)
      })
    },
    Schema.Void
  ),
  operation("GroupsSetPicture", { ...groupId, jpeg: Schema.NullOr(Schema.Uint8ArrayFromBase64) }, Schema.Void),
  operation("GroupsJoinRequests", groupId, Schema.Array(JoinRequest)),
  operation(
    "GroupsAnswerJoinRequests",
    { ...groupId, participants: Schema.Array(Schema.String), answer: Schema.Literal("approve", "reject") },
    Schema.Array(ParticipantResult)
  )
)

type EngineRpc = RpcGroup.Rpcs<typeof EngineRpcs>
export type EngineOperation = EngineRpc["_tag"]
export type EnginePayload<Op extends EngineOperation> = Rpc.Payload<Rpc.ExtractTag<EngineRpc, Op>>
export type EngineSuccess<Op extends EngineOperation> = Rpc.Success<Rpc.ExtractTag<EngineRpc, Op>>

/**
 * A client with one method per operation (the cluster's client of a session's entity is one).
 * Indexed by a generic operation, a mapped type like this one (or `onConnection` below) keeps
 * the method's payload and answer tied to that operation: no cast is needed to run a call.
 */
export type EngineClient<E> = {
  readonly [Op in EngineOperation]: (payload: EnginePayload<Op>) => Effect.Effect<EngineSuccess<Op>, E>
}

/** An engine operation named as data, with its payload: what a service hands to the supervisor. */
export interface EngineCall<Op extends EngineOperation> {
  readonly operation: Op
  readonly payload: EnginePayload<Op>
}

export const engineCall = <Op extends EngineOperation>(operation: Op, payload: EnginePayload<Op>): EngineCall<Op> => ({
  operation,
  payload
})

/** A pairing code is asked for while the QR is shown; everything else needs the account linked. */
export const requiredStatus = (operation: EngineOperation): SessionStatus =>
  operation === "RequestPairingCode" ? "qr_ready" : "ready"

type ConnectionMethods = {
  readonly [Op in EngineOperation]: (connection: EngineConnection, payload: EnginePayload<Op>) => Effect.Effect<EngineSuccess<Op>, EngineError>
}

/**
 * What each operation does on a connection: the table that lists the operations (a new Rpc in
 * `EngineRpcs` does not compile until it has its line here).
 */
const onConnection: ConnectionMethods = {
  GroupsCreate: (connection, { participants, subject }) => connection.groups.create(subject, participants),
  GroupsGet: (connection, { groupId }) => connection.groups.get(groupId),
  GroupsList: (connection) => connection.groups.list,
  GroupsUpdateParticipants: (connection, { action, groupId, participants }) =>
    connection.groups.updateParticipants(groupId, participants, action),
  GroupsSetSubject: (connection, { groupId, subject }) => connection.groups.setSubject(groupId, subject),
  GroupsSetDescription: (connection, { description, groupId }) => connection.groups.setDescription(groupId, description),
  GroupsLeave: (connection, { groupId }) => connection.groups.leave(groupId),
  GroupsInviteCode: (connection, { groupId }) => connection.groups.inviteCode(groupId),
  GroupsRevokeInvite: (connection, { groupId }) => connection.groups.revokeInvite(groupId),
  GroupsJoin: (connection, { code }) => connection.groups.join(code),
  ChannelsCreate: (connection, { description, name }) => connection.channels.create(name, description),
  ChannelsGet: (connection, { channelId }) => connection.channels.get(channelId),
  ChannelsDelete: (connection, { channelId }) => connection.channels.delete(channelId),
  ChannelsSubscribe: (connection, { target }) => connection.channels.subscribe(target),
  ChannelsUnsubscribe: (connection, { channelId }) => connection.channels.unsubscribe(channelId),
  ChannelsMessages: (connection, { channelId, count }) => connection.channels.messages(channelId, count),
  LabelsCreate: (connection, { color, name }) => connection.labels.create(name, color),
  LabelsAddToChat: (connection, { chatId, labelId }) => connection.labels.addToChat(chatId, labelId),
  LabelsRemoveFromChat: (connection, { chatId, labelId }) => connection.labels.removeFromChat(chatId, labelId),
  ContactsCheck: (connection, { phones }) => connection.contacts.check(phones),
  RequestPairingCode: (connection, { phoneNumber }) => connection.requestPairingCode(phoneNumber),
  MarkRead: (connection, { chatId, engineMessageIds }) => connection.markRead(chatId, engineMessageIds),
  React: (connection, command) => connection.react(command),
  MessageEdit: (connection, command) => connection.messages.edit(command),
  MessageRevoke: (connection, { chatId, target }) => connection.messages.revoke(chatId, target),
  MessageStar: (connection, { chatId, starred, target }) => connection.messages.star(chatId, target, starred),
  MessagePin: (connection, command) => connection.messages.pin(command),
  PollVote: (connection, command) => connection.messages.votePoll(command),
  PresenceSet: (connection, { command }) => connection.presence.set(command),
  PresenceSubscribe: (connection, { chatId }) => connection.presence.subscribe(chatId),
  ChatsModify: (connection, { chatId, modification, newest }) => connection.chats.modify(chatId, modification, newest),
  ChatsRequestHistory: (connection, { chatId, count, oldest }) => connection.chats.requestHistory(chatId, count, oldest),
  ProfileGet: (connection) => connection.profile.get,
  ProfileSetName: (connection, { name }) => connection.profile.setName(name),
  ProfileSetAbout: (connection, { about }) => connection.profile.setAbout(about),
  ProfileSetPicture: (connection, { jpeg }) => connection.profile.setPicture(jpeg),
  ContactsProfile: (connection, { chatId }) => connection.contacts.profile(chatId),
  ContactsPictureUrl: (connection, { chatId }) => connection.contacts.pictureUrl(chatId),
  ContactsDownloadPicture: (connection, { url }) => connection.contacts.downloadPicture(url),
  ContactsSetBlocked: (connection, { blocked, chatId }) => connection.contacts.setBlocked(chatId, blocked),
  ContactsBlocklist: (connection) => connection.contacts.blocklist,
  ContactsResolveIds: (connection, { chatId }) => connection.contacts.resolveIds(chatId),
  CallsReject: (connection, { callId, from }) => connection.calls.reject(callId, from),
  GroupsSetSettings: (connection, { change, groupId }) => connection.groups.setSettings(groupId, change),
  GroupsSetPicture: (connection, { groupId, jpeg }) => connection.groups.setPicture(groupId, jpeg),
  GroupsJoinRequests: (connection, { groupId }) => connection.groups.joinRequests(groupId),
  GroupsAnswerJoinRequests: (connection, { answer, groupId, participants }) =>
    connection.groups.answerJoinRequests(groupId, participants, answer)
}

/** Runs the call on the connection. */
export const applyEngineCall = <Op extends EngineOperation>(
  connection: EngineConnection,
  call: EngineCall<Op>
): Effect.Effect<EngineSuccess<Op>, EngineError> => onConnection[call.operation](connection, call.payload)

/** Sends the call through a client that reaches the session's connection (the cluster's). */
export const runEngineCall = <Op extends EngineOperation, E>(
  client: EngineClient<E>,
  call: EngineCall<Op>
): Effect.Effect<EngineSuccess<Op>, E> => client[call.operation](call.payload)

/** One entry per operation, as `make` builds it (the cluster's entity: a handler for each). */
export const perOperation = <B>(make: (operation: EngineOperation) => B): { readonly [Op in EngineOperation]: B } =>
  Record.map(onConnection, (_, operation) => make(operation))
