import { Schema } from "effect"

/** Someone the session knows, with both of WhatsApp's ids as far as known. */
export const Contact = Schema.Struct({
  /** The phone id (`…@c.us`) when known, else the privacy id (`…@lid`). */
  id: Schema.String,
  phone: Schema.NullOr(Schema.String),
  lid: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  updatedAt: Schema.String
}).annotations({ identifier: "Contact" })
export type Contact = typeof Contact.Type

export const ContactCheck = Schema.Struct({
  number: Schema.String,
  exists: Schema.Boolean,
  chatId: Schema.NullOr(Schema.String),
  lid: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ContactCheck" })
export type ContactCheck = typeof ContactCheck.Type

/** What the session knows of one person: both ids, names, about, and whether it blocked them. */
export const ContactDetails = Schema.Struct({
  chatId: Schema.String,
  phone: Schema.NullOr(Schema.String),
  lid: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String).annotations({ description: "the name in the account's address book" }),
  pushName: Schema.NullOr(Schema.String).annotations({ description: "the name they chose for themselves" }),
  about: Schema.NullOr(Schema.String),
  isBusiness: Schema.Boolean,
  blocked: Schema.Boolean
}).annotations({ identifier: "ContactDetails" })
export type ContactDetails = typeof ContactDetails.Type

export const ContactPicture = Schema.Struct({ url: Schema.NullOr(Schema.String) }).annotations({ identifier: "ContactPicture" })

/** Both ids of a person: what the session has learnt, else what the network answers. */
export const LidLookup = Schema.Struct({
  lid: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  chatId: Schema.String.annotations({ description: "the id to write to: the phone id when known, else the LID" })
}).annotations({ identifier: "LidLookup" })
export type LidLookup = typeof LidLookup.Type

/** A change to a contact as `contact.update` announces it: only the fields that changed. */
export const ContactChanges = Schema.Struct({
  name: Schema.optional(Schema.NullOr(Schema.String)),
  pushName: Schema.optional(Schema.NullOr(Schema.String)),
  about: Schema.optional(Schema.NullOr(Schema.String)),
  picture: Schema.optional(Schema.Literal("changed", "removed")),
  blocked: Schema.optional(Schema.Boolean),
  lid: Schema.optional(Schema.String),
  phone: Schema.optional(Schema.String)
})
export type ContactChanges = typeof ContactChanges.Type
