import { UnsupportedMediaType, ValidationFailed } from "../../domain/Errors.js"
import type { MediaKind } from "../../domain/Message.js"

/** The errors of media intake about the bytes themselves, in one place so their wording stays consistent. Fetching: runtime/network/fetchErrors.ts. */

export const emptyMedia = () => new ValidationFailed({ code: "VALIDATION_FAILED", message: "media is empty (0 bytes)" })

export const unsupportedMediaType = (kind: MediaKind, detected: string | null, accepted: ReadonlyArray<string>) =>
  new UnsupportedMediaType({
    code: "UNSUPPORTED_MEDIA_TYPE",
    message: `${kind} media must be ${accepted.join(", ")}; these bytes are ${detected ?? "of no type we recognise"}`,
    details: { detected, accepted }
  })

export const undecodableMedia = (kind: MediaKind, detected: string) =>
  new UnsupportedMediaType({
    code: "UNSUPPORTED_MEDIA_TYPE",
    message: `${kind} media is ${detected} by its magic numbers, but the image in it cannot be decoded`,
    details: { detected, accepted: [detected] }
  })
