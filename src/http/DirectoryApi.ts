import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Channel, ChannelMessage, CreateChannelRequest, SubscribeRequest } from "../domain/Channel.js"
import { Contact, ContactCheck, ContactDetails, ContactPicture, LidLookup } from "../domain/Contact.js"
import {
  CreateGroupRequest,
  DescriptionRequest,
  Group,
  GroupSettingsRequest,
  InviteCode,
  JoinRequest,
  JoinGroupRequest,
  ParticipantsRequest,
  ParticipantsResult,
  SubjectRequest
} from "../domain/Group.js"
import { ChannelId, ChatIdFromInput, GroupId, PersonIdFromInput, phoneNumberPattern } from "../domain/Ids.js"
import { pictureUpload } from "./ProfileApi.js"
import { ChatLabelRequest, CreateLabelRequest, Label } from "../domain/Label.js"
import { Authentication } from "./Authentication.js"
import { RequiredRole } from "./Endpoints.js"
import { ListBody, PageParams } from "./Pagination.js"

/**
 * The contract's contacts, groups, channels and labels (their groups of SwitchboardApi in
 * ./Api.ts). Every operation of groups and contacts may answer 503 (the Store or the media store
 * cannot be reached) and 413 (a body over BODY_MAX_BYTES); 401/403/429 come with Authentication,
 * 400/404/409 with SwitchboardApi.
 */

const session = { sessionId: Schema.String }
const sessionPath = Schema.Struct(session)
const groupPath = Schema.Struct({ ...session, groupId: GroupId })
const channelPath = Schema.Struct({ ...session, channelId: ChannelId })
const chatPath = Schema.Struct({ ...session, chatId: ChatIdFromInput })
const pageParams = Schema.Struct(PageParams)

const groupsRoute = "/sessions/:sessionId/groups"

export class GroupsGroup extends HttpApiGroup.make("groups")
  .add(HttpApiEndpoint.get("list", groupsRoute).annotate(RequiredRole, "viewer").setPath(sessionPath).setUrlParams(pageParams).addSuccess(ListBody(Group)))
  .add(HttpApiEndpoint.post("create", groupsRoute).annotate(RequiredRole, "operator").setPath(sessionPath).setPayload(CreateGroupRequest).addSuccess(Group, { status: 201 }))
  .add(HttpApiEndpoint.post("join", `${groupsRoute}/join`).annotate(RequiredRole, "operator").setPath(sessionPath).setPayload(JoinGroupRequest).addSuccess(Group))
  .add(HttpApiEndpoint.get("get", `${groupsRoute}/:groupId`).annotate(RequiredRole, "viewer").setPath(groupPath).addSuccess(Group))
  .add(HttpApiEndpoint.post("addParticipants", `${groupsRoute}/:groupId/participants`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(ParticipantsRequest).addSuccess(ParticipantsResult))
  .add(HttpApiEndpoint.del("removeParticipants", `${groupsRoute}/:groupId/participants`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(ParticipantsRequest).addSuccess(ParticipantsResult))
  .add(HttpApiEndpoint.post("promote", `${groupsRoute}/:groupId/participants/promote`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(ParticipantsRequest).addSuccess(ParticipantsResult))
  .add(HttpApiEndpoint.post("demote", `${groupsRoute}/:groupId/participants/demote`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(ParticipantsRequest).addSuccess(ParticipantsResult))
  .add(HttpApiEndpoint.put("setSubject", `${groupsRoute}/:groupId/subject`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(SubjectRequest).addSuccess(Group))
  .add(HttpApiEndpoint.put("setDescription", `${groupsRoute}/:groupId/description`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(DescriptionRequest).addSuccess(Group))
  .add(HttpApiEndpoint.post("leave", `${groupsRoute}/:groupId/leave`).annotate(RequiredRole, "operator").setPath(groupPath).addSuccess(HttpApiSchema.NoContent))
  .add(HttpApiEndpoint.get("inviteCode", `${groupsRoute}/:groupId/invite-code`).annotate(RequiredRole, "viewer").setPath(groupPath).addSuccess(InviteCode))
  .add(HttpApiEndpoint.post("revokeInvite", `${groupsRoute}/:groupId/invite-code/revoke`).annotate(RequiredRole, "operator").setPath(groupPath).addSuccess(InviteCode))
  .add(HttpApiEndpoint.put("setSettings", `${groupsRoute}/:groupId/settings`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(GroupSettingsRequest).addSuccess(Group))
  .add(pictureUpload("setPicture", `${groupsRoute}/:groupId/picture`).setPath(groupPath).addSuccess(HttpApiSchema.NoContent))
  .add(HttpApiEndpoint.del("removePicture", `${groupsRoute}/:groupId/picture`).annotate(RequiredRole, "operator").setPath(groupPath).addSuccess(HttpApiSchema.NoContent))
  .add(HttpApiEndpoint.get("joinRequests", `${groupsRoute}/:groupId/requests`).annotate(RequiredRole, "viewer").setPath(groupPath).setUrlParams(pageParams).addSuccess(ListBody(JoinRequest)))
  .add(HttpApiEndpoint.post("approveRequests", `${groupsRoute}/:groupId/requests/approve`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(ParticipantsRequest).addSuccess(ParticipantsResult))
  .add(HttpApiEndpoint.post("rejectRequests", `${groupsRoute}/:groupId/requests/reject`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(ParticipantsRequest).addSuccess(ParticipantsResult))
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Groups the session is in. Lists come from the network when the session is ready, else from the Store.")
{}

const channelsRoute = "/sessions/:sessionId/channels"

export class ChannelsGroup extends HttpApiGroup.make("channels")
  .add(HttpApiEndpoint.get("list", channelsRoute).annotate(RequiredRole, "viewer").setPath(sessionPath).setUrlParams(pageParams).addSuccess(ListBody(Channel)))
  .add(HttpApiEndpoint.post("create", channelsRoute).annotate(RequiredRole, "operator").setPath(sessionPath).setPayload(CreateChannelRequest).addSuccess(Channel, { status: 201 }))
  .add(HttpApiEndpoint.post("subscribe", `${channelsRoute}/subscribe`).annotate(RequiredRole, "operator").setPath(sessionPath).setPayload(SubscribeRequest).addSuccess(Channel))
  .add(HttpApiEndpoint.get("get", `${channelsRoute}/:channelId`).annotate(RequiredRole, "viewer").setPath(channelPath).addSuccess(Channel))
  .add(
    HttpApiEndpoint.del("remove", `${channelsRoute}/:channelId`).annotate(RequiredRole, "operator")
      .setPath(channelPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Description, "Deletes a channel this session owns; unfollows one it follows.")
  )
  .add(HttpApiEndpoint.get("messages", `${channelsRoute}/:channelId/messages`).annotate(RequiredRole, "viewer").setPath(channelPath).setUrlParams(pageParams).addSuccess(ListBody(ChannelMessage)))
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Channels (newsletters). Posting is send-text or a media send to the …@newsletter id.")
{}

const labelsRoute = "/sessions/:sessionId/labels"

export class LabelsGroup extends HttpApiGroup.make("labels")
  .add(HttpApiEndpoint.get("list", labelsRoute).annotate(RequiredRole, "viewer").setPath(sessionPath).setUrlParams(pageParams).addSuccess(ListBody(Label)))
  .add(HttpApiEndpoint.post("create", labelsRoute).annotate(RequiredRole, "operator").setPath(sessionPath).setPayload(CreateLabelRequest).addSuccess(Label, { status: 201 }))
  .add(HttpApiEndpoint.get("ofChat", `${labelsRoute}/chat/:chatId`).annotate(RequiredRole, "viewer").setPath(chatPath).addSuccess(Schema.Array(Label)))
  .add(HttpApiEndpoint.post("addToChat", `${labelsRoute}/chat/:chatId`).annotate(RequiredRole, "operator").setPath(chatPath).setPayload(ChatLabelRequest).addSuccess(Schema.Array(Label)))
  .add(
    HttpApiEndpoint.del("removeFromChat", `${labelsRoute}/chat/:chatId/:labelId`).annotate(RequiredRole, "operator")
      .setPath(Schema.Struct({ ...session, chatId: ChatIdFromInput, labelId: Schema.String }))
      .addSuccess(Schema.Array(Label))
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "WhatsApp Business labels; a session that is not a business account gets 409 NOT_A_BUSINESS_ACCOUNT.")
{}

const contactsRoute = "/sessions/:sessionId/contacts"
const personPath = Schema.Struct({ ...session, chatId: PersonIdFromInput })
/** A LID as digits, with or without its `@lid`. */
const lidPath = Schema.Struct({
  ...session,
  lid: Schema.String.pipe(Schema.pattern(/^\d{1,24}(@lid)?$/, { message: () => "lid must be digits, optionally followed by @lid" }))
})
const JpegImage = Schema.Uint8ArrayFromSelf.pipe(HttpApiSchema.withEncoding({ kind: "Uint8Array", contentType: "image/jpeg" }))

export class ContactsGroup extends HttpApiGroup.make("contacts")
  .add(
    HttpApiEndpoint.get("check", "/sessions/:sessionId/contacts/check/:number").annotate(RequiredRole, "viewer")
      .setPath(Schema.Struct({
        ...session,
        number: Schema.String.pipe(Schema.pattern(phoneNumberPattern, { message: () => "number must be a phone number: 6–15 digits, optional +" }))
      }))
      .addSuccess(ContactCheck)
  )
  .add(HttpApiEndpoint.get("list", "/sessions/:sessionId/contacts").annotate(RequiredRole, "viewer").setPath(sessionPath).setUrlParams(pageParams).addSuccess(ListBody(Contact)))
  // Fixed segments (blocklist, lid, check) before `{chatId}`, which would take them as ids.
  .add(HttpApiEndpoint.get("blocklist", `${contactsRoute}/blocklist`).annotate(RequiredRole, "viewer").setPath(sessionPath).setUrlParams(pageParams).addSuccess(ListBody(ContactDetails)))
  .add(HttpApiEndpoint.get("byLid", `${contactsRoute}/lid/:lid`).annotate(RequiredRole, "viewer").setPath(lidPath).addSuccess(LidLookup))
  .add(HttpApiEndpoint.get("lidOf", `${contactsRoute}/:chatId/lid`).annotate(RequiredRole, "viewer").setPath(personPath).addSuccess(LidLookup))
  .add(HttpApiEndpoint.get("details", `${contactsRoute}/:chatId`).annotate(RequiredRole, "viewer").setPath(personPath).addSuccess(ContactDetails))
  .add(
    HttpApiEndpoint.get("picture", `${contactsRoute}/:chatId/picture`).annotate(RequiredRole, "viewer")
      .setPath(Schema.Struct({ ...session, chatId: ChatIdFromInput }))
      .setUrlParams(Schema.Struct({ format: Schema.optional(Schema.Literal("json", "image")) }))
      .addSuccess(ContactPicture)
      .addSuccess(JpegImage)
      .annotate(OpenApi.Description, "The URL of the person's (or a group's) picture; ?format=image gives the JPEG itself (kept in the media store), 404 PICTURE_NOT_FOUND when there is none.")
  )
  .add(HttpApiEndpoint.post("block", `${contactsRoute}/:chatId/block`).annotate(RequiredRole, "operator").setPath(personPath).addSuccess(ContactDetails))
  .add(HttpApiEndpoint.post("unblock", `${contactsRoute}/:chatId/unblock`).annotate(RequiredRole, "operator").setPath(personPath).addSuccess(ContactDetails))
  .middleware(Authentication)
{}
