import { Schema } from "effect"

/** WhatsApp Business labels have one of 20 colours, by index. */
export const LabelColor = Schema.Int.pipe(Schema.between(0, 19, { message: () => "color is a label colour index, 0–19" }))

export const Label = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  color: Schema.Number
}).annotations({ identifier: "Label" })
export type Label = typeof Label.Type

export const CreateLabelRequest = Schema.Struct({
  name: Schema.String.pipe(
    Schema.minLength(1, { message: () => "name must not be empty" }),
    Schema.maxLength(100, { message: () => "name must be at most 100 characters" })
  ),
  color: Schema.optional(LabelColor)
})
export type CreateLabelRequest = typeof CreateLabelRequest.Type

export const ChatLabelRequest = Schema.Struct({ labelId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)) })
