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
