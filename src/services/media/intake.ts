import { Effect } from "effect"
import { AppSettings } from "../../layers/Config.js"
import { PayloadTooLarge, ValidationFailed } from "../Errors.js"
import type { MediaIntakeService } from "../MediaIntake.js"

// Provisional: the size cap and the declared type only; sniffing and URL fetching follow.
export const makeMediaIntake = Effect.gen(function*() {
  const { media } = yield* AppSettings
  const service: MediaIntakeService = {
    accept: (_kind, source) =>
      Effect.gen(function*() {
        if ("url" in source) return yield* new ValidationFailed({ code: "VALIDATION_FAILED", message: "media URLs are not supported yet" })
        if (source.data.length > media.maxBytes) {
          return yield* new PayloadTooLarge({ code: "PAYLOAD_TOO_LARGE", message: `media is larger than ${media.maxBytes} bytes` })
        }
        return { data: source.data, mimetype: source.mimetype ?? "application/octet-stream", filename: source.filename ?? null }
      })
  }
  return service
})
