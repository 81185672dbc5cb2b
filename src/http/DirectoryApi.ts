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
import { answersAlso } from "./openApiDocument.js"
import { ListBody, PageParams } from "./Pagination.js"

/**
 * The contract's contacts, groups, channels and labels (their groups of SwitchboardApi in
 * ./Api.ts). Every operation of groups and contacts may answer 503 (the Store or the media store
 * cannot be reached) and 413 (a body over BODY_MAX_BYTES): these come with SwitchboardApi, as
 * 400/404/409 do; 401/403/429 come with Authentication.
 */

const session = { sessionId: Schema.String }
const sessionPath = Schema.Struct(session)
const groupPath = Schema.Struct({ ...session, groupId: GroupId })
const channelPath = Schema.Struct({ ...session, channelId: ChannelId })
const chatPath = Schema.Struct({ ...session, chatId: ChatIdFromInput })
const pageParams = Schema.Struct(PageParams)

const groupsRoute = "/sessions/:sessionId/groups"

export class GroupsGroup extends HttpApiGroup.make("groups")
  .add(
    HttpApiEndpoint.get("list", groupsRoute).annotate(RequiredRole, "viewer").setPath(sessionPath).setUrlParams(pageParams).addSuccess(ListBody(Group))
      .annotate(OpenApi.Summary, "List groups")
      .annotate(OpenApi.Description, "The groups the session is in: from the network when the session is ready, else from the Store.")
  )
  .add(
    HttpApiEndpoint.post("create", groupsRoute).annotate(RequiredRole, "operator").setPath(sessionPath).setPayload(CreateGroupRequest).addSuccess(Group, { status: 201 })
      .annotate(OpenApi.Summary, "Create a group")
      .annotate(OpenApi.Description, "Creates a group with a subject and its first participants; answers the group.")
  )
  .add(
    HttpApiEndpoint.post("join", `${groupsRoute}/join`).annotate(RequiredRole, "operator").setPath(sessionPath).setPayload(JoinGroupRequest).addSuccess(Group)
      .annotate(OpenApi.Summary, "Join a group by invite")
      .annotate(OpenApi.Description, "Joins the group of an invite code (or its whole chat.whatsapp.com link); 409 JOIN_REQUEST_PENDING when its admins approve who joins.")
  )
  .add(
    HttpApiEndpoint.get("get", `${groupsRoute}/:groupId`).annotate(RequiredRole, "viewer").setPath(groupPath).addSuccess(Group)
      .annotate(OpenApi.Summary, "Get a group")
      .annotate(OpenApi.Description, "The group's subject, description, settings and participants with their roles.")
  )
  .add(
    HttpApiEndpoint.post("addParticipants", `${groupsRoute}/:groupId/participants`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(ParticipantsRequest).addSuccess(ParticipantsResult)
      .annotate(OpenApi.Summary, "Add participants")
      .annotate(OpenApi.Description, "Adds people to the group (admins only); answers each one's outcome.")
  )
  .add(
    HttpApiEndpoint.del("removeParticipants", `${groupsRoute}/:groupId/participants`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(ParticipantsRequest).addSuccess(ParticipantsResult)
      .annotate(OpenApi.Summary, "Remove participants")
      .annotate(OpenApi.Description, "Removes people from the group (admins only); answers each one's outcome.")
  )
  .add(
    HttpApiEndpoint.post("promote", `${groupsRoute}/:groupId/participants/promote`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(ParticipantsRequest).addSuccess(ParticipantsResult)
      .annotate(OpenApi.Summary, "Promote participants to admin")
      .annotate(OpenApi.Description, "Makes participants admins (admins only); answers each one's outcome.")
  )
  .add(
    HttpApiEndpoint.post("demote", `${groupsRoute}/:groupId/participants/demote`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(ParticipantsRequest).addSuccess(ParticipantsResult)
      .annotate(OpenApi.Summary, "Demote admins")
      .annotate(OpenApi.Description, "Takes admin rights from participants (admins only); answers each one's outcome.")
  )
  .add(
    HttpApiEndpoint.put("setSubject", `${groupsRoute}/:groupId/subject`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(SubjectRequest).addSuccess(Group)
      .annotate(OpenApi.Summary, "Set the group's subject")
      .annotate(OpenApi.Description, "Renames the group; answers the group.")
  )
  .add(
    HttpApiEndpoint.put("setDescription", `${groupsRoute}/:groupId/description`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(DescriptionRequest).addSuccess(Group)
      .annotate(OpenApi.Summary, "Set the group's description")
      .annotate(OpenApi.Description, "Sets or clears the group's description; answers the group.")
  )
  .add(
    HttpApiEndpoint.post("leave", `${groupsRoute}/:groupId/leave`).annotate(RequiredRole, "operator").setPath(groupPath).addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Leave a group")
      .annotate(OpenApi.Description, "The session leaves the group.")
  )
  .add(
    HttpApiEndpoint.get("inviteCode", `${groupsRoute}/:groupId/invite-code`).annotate(RequiredRole, "viewer").setPath(groupPath).addSuccess(InviteCode)
      .annotate(OpenApi.Summary, "Get the group's invite code")
      .annotate(OpenApi.Description, "The group's invite code and link (admins only).")
  )
  .add(
    HttpApiEndpoint.post("revokeInvite", `${groupsRoute}/:groupId/invite-code/revoke`).annotate(RequiredRole, "operator").setPath(groupPath).addSuccess(InviteCode)
      .annotate(OpenApi.Summary, "Revoke the group's invite code")
      .annotate(OpenApi.Description, "Makes the current invite link stop working and answers the new one (admins only).")
  )
  .add(
    HttpApiEndpoint.put("setSettings", `${groupsRoute}/:groupId/settings`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(GroupSettingsRequest).addSuccess(Group)
      .annotate(OpenApi.Summary, "Change the group's settings")
      .annotate(OpenApi.Description, "Changes who may send (announce), who may edit the group's info (restrict), who may add members, and whether admins approve who joins; answers the group.")
  )
  .add(
    pictureUpload("setPicture", `${groupsRoute}/:groupId/picture`).setPath(groupPath).addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Set the group's picture")
  )
  .add(
    HttpApiEndpoint.del("removePicture", `${groupsRoute}/:groupId/picture`).annotate(RequiredRole, "operator").setPath(groupPath).addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Remove the group's picture")
      .annotate(OpenApi.Description, "Removes the group's picture (admins only).")
  )
  .add(
    HttpApiEndpoint.get("joinRequests", `${groupsRoute}/:groupId/requests`).annotate(RequiredRole, "viewer").setPath(groupPath).setUrlParams(pageParams).addSuccess(ListBody(JoinRequest))
      .annotate(OpenApi.Summary, "List join requests")
      .annotate(OpenApi.Description, "The people waiting for an admin to let them in, in a group that needs approval.")
  )
  .add(
    HttpApiEndpoint.post("approveRequests", `${groupsRoute}/:groupId/requests/approve`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(ParticipantsRequest).addSuccess(ParticipantsResult)
      .annotate(OpenApi.Summary, "Approve join requests")
      .annotate(OpenApi.Description, "Lets the people asking to join in (admins only); answers each one's outcome.")
  )
  .add(
    HttpApiEndpoint.post("rejectRequests", `${groupsRoute}/:groupId/requests/reject`).annotate(RequiredRole, "operator").setPath(groupPath).setPayload(ParticipantsRequest).addSuccess(ParticipantsResult)
      .annotate(OpenApi.Summary, "Reject join requests")
      .annotate(OpenApi.Description, "Refuses the people asking to join (admins only); answers each one's outcome.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Groups the session is in. Lists come from the network when the session is ready, else from the Store.")
{}

const channelsRoute = "/sessions/:sessionId/channels"

export class ChannelsGroup extends HttpApiGroup.make("channels")
  .add(
    HttpApiEndpoint.get("list", channelsRoute).annotate(RequiredRole, "viewer").setPath(sessionPath).setUrlParams(pageParams).addSuccess(ListBody(Channel))
      .annotate(OpenApi.Summary, "List channels")
      .annotate(OpenApi.Description, "The channels (newsletters) the session owns or follows.")
  )
  .add(
    HttpApiEndpoint.post("create", channelsRoute).annotate(RequiredRole, "operator").setPath(sessionPath).setPayload(CreateChannelRequest).addSuccess(Channel, { status: 201 })
      .annotate(OpenApi.Summary, "Create a channel")
      .annotate(OpenApi.Description, "Creates a channel owned by the session, with a name and an optional description.")
  )
  .add(
    HttpApiEndpoint.post("subscribe", `${channelsRoute}/subscribe`).annotate(RequiredRole, "operator").setPath(sessionPath).setPayload(SubscribeRequest).addSuccess(Channel)
      .annotate(OpenApi.Summary, "Follow a channel")
      .annotate(OpenApi.Description, "Follows a channel by its id or by the code of its invite link; answers the channel.")
  )
  .add(
    HttpApiEndpoint.get("get", `${channelsRoute}/:channelId`).annotate(RequiredRole, "viewer").setPath(channelPath).addSuccess(Channel)
      .annotate(OpenApi.Summary, "Get a channel")
      .annotate(OpenApi.Description, "One channel: its name, description, invite code and the session's role in it.")
  )
  .add(
    HttpApiEndpoint.del("remove", `${channelsRoute}/:channelId`).annotate(RequiredRole, "operator")
      .setPath(channelPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Description, "Deletes a channel this session owns; unfollows one it follows.")
      .annotate(OpenApi.Summary, "Delete or unfollow a channel")
  )
  .add(
    HttpApiEndpoint.get("messages", `${channelsRoute}/:channelId/messages`).annotate(RequiredRole, "viewer").setPath(channelPath).setUrlParams(pageParams).addSuccess(ListBody(ChannelMessage))
      .annotate(OpenApi.Summary, "List a channel's messages")
      .annotate(OpenApi.Description, "The channel's posts, newest first.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Channels (newsletters). Posting is send-text or a media send to the …@newsletter id.")
{}

const labelsRoute = "/sessions/:sessionId/labels"

export class LabelsGroup extends HttpApiGroup.make("labels")
  .add(
    HttpApiEndpoint.get("list", labelsRoute).annotate(RequiredRole, "viewer").setPath(sessionPath).setUrlParams(pageParams).addSuccess(ListBody(Label))
      .annotate(OpenApi.Summary, "List labels")
      .annotate(OpenApi.Description, "The account's WhatsApp Business labels.")
  )
  .add(
    HttpApiEndpoint.post("create", labelsRoute).annotate(RequiredRole, "operator").setPath(sessionPath).setPayload(CreateLabelRequest).addSuccess(Label, { status: 201 })
      .annotate(OpenApi.Summary, "Create a label")
      .annotate(OpenApi.Description, "Creates a label with a name and an optional colour.")
  )
  .add(
    HttpApiEndpoint.get("ofChat", `${labelsRoute}/chat/:chatId`).annotate(RequiredRole, "viewer").setPath(chatPath).addSuccess(Schema.Array(Label))
      .annotate(OpenApi.Summary, "Get a chat's labels")
      .annotate(OpenApi.Description, "The labels on one chat.")
  )
  .add(
    HttpApiEndpoint.post("addToChat", `${labelsRoute}/chat/:chatId`).annotate(RequiredRole, "operator").setPath(chatPath).setPayload(ChatLabelRequest).addSuccess(Schema.Array(Label))
      .annotate(OpenApi.Summary, "Label a chat")
      .annotate(OpenApi.Description, "Puts a label on the chat; answers the chat's labels.")
  )
  .add(
    HttpApiEndpoint.del("removeFromChat", `${labelsRoute}/chat/:chatId/:labelId`).annotate(RequiredRole, "operator")
      .setPath(Schema.Struct({ ...session, chatId: ChatIdFromInput, labelId: Schema.String }))
      .addSuccess(Schema.Array(Label))
      .annotate(OpenApi.Summary, "Unlabel a chat")
      .annotate(OpenApi.Description, "Takes a label off the chat; answers the chat's labels.")
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
      .annotate(OpenApi.Summary, "Check a number on WhatsApp")
      .annotate(OpenApi.Description, "Whether a phone number has WhatsApp, with its chat id and LID when it has.")
  )
  .add(
    HttpApiEndpoint.get("list", "/sessions/:sessionId/contacts").annotate(RequiredRole, "viewer").setPath(sessionPath).setUrlParams(pageParams).addSuccess(ListBody(Contact))
      .annotate(OpenApi.Summary, "List contacts")
      .annotate(OpenApi.Description, "The contacts the session knows, with their names.")
  )
  // Fixed segments (blocklist, lid, check) before `{chatId}`, which would take them as ids.
  .add(
    HttpApiEndpoint.get("blocklist", `${contactsRoute}/blocklist`).annotate(RequiredRole, "viewer").setPath(sessionPath).setUrlParams(pageParams).addSuccess(ListBody(ContactDetails))
      .annotate(OpenApi.Summary, "List blocked contacts")
      .annotate(OpenApi.Description, "The people the account has blocked.")
  )
  .add(
    HttpApiEndpoint.get("byLid", `${contactsRoute}/lid/:lid`).annotate(RequiredRole, "viewer").setPath(lidPath).addSuccess(LidLookup)
      .annotate(OpenApi.Summary, "Find a contact by LID")
      .annotate(OpenApi.Description, "The phone and chat id behind a LID (WhatsApp's hidden-number id), when known.")
  )
  .add(
    HttpApiEndpoint.get("lidOf", `${contactsRoute}/:chatId/lid`).annotate(RequiredRole, "viewer").setPath(personPath).addSuccess(LidLookup)
      .annotate(OpenApi.Summary, "Get a contact's LID")
      .annotate(OpenApi.Description, "The LID of a person given by phone or chat id, when known.")
  )
  .add(
    HttpApiEndpoint.get("details", `${contactsRoute}/:chatId`).annotate(RequiredRole, "viewer").setPath(personPath).addSuccess(ContactDetails)
      .annotate(OpenApi.Summary, "Get a contact")
      .annotate(OpenApi.Description, "What the session knows of one person: both ids, names, about text, and whether it blocked them.")
  )
  .add(
    HttpApiEndpoint.get("picture", `${contactsRoute}/:chatId/picture`).annotate(RequiredRole, "viewer")
      .setPath(Schema.Struct({ ...session, chatId: ChatIdFromInput }))
      .setUrlParams(Schema.Struct({ format: Schema.optional(Schema.Literal("json", "image")) }))
      .addSuccess(ContactPicture)
      .addSuccess(JpegImage)
      .annotate(OpenApi.Transform, answersAlso(200, "image/jpeg"))
      .annotate(OpenApi.Description, "The URL of the person's (or a group's) picture; ?format=image gives the JPEG itself (kept in the media store), 404 PICTURE_NOT_FOUND when there is none.")
      .annotate(OpenApi.Summary, "Get a contact's picture")
  )
  .add(
    HttpApiEndpoint.post("block", `${contactsRoute}/:chatId/block`).annotate(RequiredRole, "operator").setPath(personPath).addSuccess(ContactDetails)
      .annotate(OpenApi.Summary, "Block a contact")
      .annotate(OpenApi.Description, "Blocks the person; answers their details.")
  )
  .add(
    HttpApiEndpoint.post("unblock", `${contactsRoute}/:chatId/unblock`).annotate(RequiredRole, "operator").setPath(personPath).addSuccess(ContactDetails)
      .annotate(OpenApi.Summary, "Unblock a contact")
      .annotate(OpenApi.Description, "Unblocks the person; answers their details.")
  )
  .middleware(Authentication)
{}
