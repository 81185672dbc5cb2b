import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { type ApiError, ErrorBody, toErrorBody } from "../domain/Errors.js"

type ErrorClass<E extends ApiError> = Schema.Schema<E, any> & {
  readonly status: number
  readonly codes: ReadonlyArray<string>
  new(props: { code: string; message: string; details?: unknown }): E
}

/**
 * `ErrorBody` as the document declares it for one class: its status, and its `code` as the
 * enum of the class's codes. The enums are the document's only: decoding and encoding keep
 * `code` a string, so a code the list missed still reaches the caller with its own status
 * rather than failing to encode (the contract test catches the miss).
 */
const errorBodyOf = (cls: { readonly status: number; readonly codes: ReadonlyArray<string> }) =>
  Schema.Struct({
    ...ErrorBody.fields,
    statusCode: ErrorBody.fields.statusCode.annotations({ jsonSchema: { type: "integer", enum: [cls.status] } }),
    error: ErrorBody.fields.error.annotations({ jsonSchema: { type: "string", enum: [reasonPhrase(cls.status)] } }),
    code: ErrorBody.fields.code.annotations({ jsonSchema: { type: "string", enum: [...cls.codes] } })
  })

/** The status's reason phrase, as `toErrorBody` writes it in `error`. */
const reasonPhrase = (status: number) => toErrorBody(status, { code: "", message: "" }).error

const schemaOfClass = new Map<ErrorClass<any>, Schema.Schema<any, any>>()

/**
 * The schema the HTTP contract uses for an error class: the class on the inside, `ErrorBody`
 * (src/domain/Errors.ts) on the wire, and the class's HTTP status as annotation. One schema a
 * class: the contract declares 403 both in authentication and on the API, and the document
 * then shows it once rather than as a union of two equal schemas.
 */
export const wireError = <E extends ApiError>(cls: ErrorClass<E>): Schema.Schema<E, typeof ErrorBody.Encoded> => {
  const known = schemaOfClass.get(cls)
  if (known !== undefined) return known
  const schema = Schema.transform(errorBodyOf(cls), Schema.typeSchema(cls), {
    strict: false,
    decode: (body) => new cls({ code: body.code, message: body.message, details: body.details }),
    encode: (error) => toErrorBody(cls.status, error)
  }).annotations({ ...HttpApiSchema.annotations({ status: cls.status }), description: `${reasonPhrase(cls.status)}: \`code\` says why` })
  schemaOfClass.set(cls, schema)
  return schema
}
