import { Schema } from "effect"
import { PersonIdFromInput } from "./Ids.js"

export const ParticipantRole = Schema.Literal("member", "admin", "superadmin")
export type ParticipantRole = typeof ParticipantRole.Type

export const GroupParticipant = Schema.Struct({
  /** `…@c.us` when the phone number is known, else `…@lid`. */
  id: Schema.String,
  role: ParticipantRole
})
export type GroupParticipant = typeof GroupParticipant.Type

export const Group = Schema.Struct({
  id: Schema.String,
  subject: Schema.String,
  description: Schema.NullOr(Schema.String),
  owner: Schema.NullOr(Schema.String),
  createdAt: Schema.NullOr(Schema.String),
  /** Only admins may send. */
  announce: Schema.Boolean,
  /** Only admins may edit the group's settings. */
  restrict: Schema.Boolean,
  /** Who may add members. */
  memberAddMode: Schema.Literal("admins", "all"),
  /** Admins approve who joins by link. */
  approval: Schema.Boolean,
  participants: Schema.Array(GroupParticipant)
}).annotations({ identifier: "Group" })
export type Group = typeof Group.Type

const subject = Schema.String.pipe(
  Schema.minLength(1, { message: () => "subject must not be empty" }),
  Schema.maxLength(100, { message: () => "subject must be at most 100 characters" })
)

const participants = Schema.Array(PersonIdFromInput).pipe(
  Schema.minItems(1, { message: () => "name at least one participant" }),
  Schema.maxItems(1024, { message: () => "at most 1024 participants at once" })
)

export const CreateGroupRequest = Schema.Struct({ subject, participants })
export type CreateGroupRequest = typeof CreateGroupRequest.Type

export const ParticipantsRequest = Schema.Struct({ participants })
export type ParticipantsRequest = typeof ParticipantsRequest.Type

export const ParticipantAction = Schema.Literal("add", "remove", "promote", "demote")
export type ParticipantAction = typeof ParticipantAction.Type

/** What happened to each participant named (WhatsApp answers per person: 200, 403, 404, 409…). */
export const ParticipantResult = Schema.Struct({
  id: Schema.String,
  status: Schema.Number,
  ok: Schema.Boolean
})
export type ParticipantResult = typeof ParticipantResult.Type

export const ParticipantsResult = Schema.Struct({ groupId: Schema.String, results: Schema.Array(ParticipantResult) })

export const SubjectRequest = Schema.Struct({ subject })
export const DescriptionRequest = Schema.Struct({
  description: Schema.String.pipe(Schema.maxLength(2048, { message: () => "description must be at most 2048 characters" }))
})

export const InviteCode = Schema.Struct({
  groupId: Schema.String,
  code: Schema.String,
  url: Schema.String
})

export const JoinGroupRequest = Schema.Struct({
  code: Schema.String.pipe(
    Schema.transform(Schema.String, {
      strict: true,
      // People paste the whole link: https://chat.whatsapp.com/<code>
      decode: (input) => input.trim().replace(/^https?:\/\/chat\.whatsapp\.com\//, ""),
      encode: (code) => code
    }),
    Schema.pattern(/^[0-9A-Za-z]{6,64}$/, { message: () => "an invite code (or https://chat.whatsapp.com/<code>)" })
  )
})

export const inviteUrl = (code: string) => `https://chat.whatsapp.com/${code}`

/** Who may add members: admins only, or every member. */
export const MemberAddMode = Schema.Literal("admins", "all")
export type MemberAddMode = typeof MemberAddMode.Type

/** `PUT …/groups/{groupId}/settings`: the settings to change (at least one). */
export const GroupSettingsRequest = Schema.Struct({
  announce: Schema.optional(Schema.Boolean.annotations({ description: "only admins may send" })),
  restrict: Schema.optional(Schema.Boolean.annotations({ description: "only admins may edit the group's info" })),
  memberAddMode: Schema.optional(MemberAddMode),
  approval: Schema.optional(Schema.Boolean.annotations({ description: "admins approve who joins by link" }))
}).pipe(
  Schema.filter((request) => Object.values(request).some((value) => value !== undefined), {
    message: () => "name at least one of announce, restrict, memberAddMode, approval"
  })
).annotations({ identifier: "GroupSettingsRequest" })
export type GroupSettingsRequest = typeof GroupSettingsRequest.Type

/** Someone asking to join a group that needs approval. */
export const JoinRequest = Schema.Struct({
  id: Schema.String,
  requestedAt: Schema.NullOr(Schema.String),
  method: Schema.NullOr(Schema.String).annotations({ description: "how they asked: invite_link, linked_group_join, …" })
}).annotations({ identifier: "JoinRequest" })
export type JoinRequest = typeof JoinRequest.Type

export const JoinRequestAction = Schema.Literal("created", "revoked", "approved", "rejected")
export type JoinRequestAction = typeof JoinRequestAction.Type
