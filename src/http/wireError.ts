import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { type ApiError, ErrorBody, toErrorBody } from "../domain/Errors.js"

type ErrorClass<E extends ApiError> = Schema.Schema<E, any> & {
  readonly status: number
  new(props: { code: string; message: string; details?: unknown }): E
}

/**
 * The schema the HTTP contract uses for an error class: the class on the inside, `ErrorBody`
 * (src/domain/Errors.ts) on the wire, and the class's HTTP status as annotation.
 */
export const wireError = <E extends ApiError>(cls: ErrorClass<E>) =>
  Schema.transform(ErrorBody, Schema.typeSchema(cls), {
    strict: false,
    decode: (body) => new cls({ code: body.code, message: body.message, details: body.details }),
    encode: (error) => toErrorBody(cls.status, error)
  }).annotations(HttpApiSchema.annotations({ status: cls.status }))
