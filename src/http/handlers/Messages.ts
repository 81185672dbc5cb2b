import { answeringStoreOutage } from "../ErrorResponses.js"
import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { DateTime, Effect, Stream } from "effect"
import { AppSettings } from "../../domain/Settings.js"
import type { MediaKind } from "../../domain/Message.js"
import { Messaging } from "../../services/Messaging.js"
import { pageRequestOf, toListBody } from "../../domain/Pagination.js"
import { SwitchboardApi } from "../Api.js"
import { readMediaRequest } from "../mediaRequest.js"

/** `inline` with the name, ASCII-safe and UTF-8 both (RFC 6266). */
const contentDisposition = (filename: string) =>
  `inline; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(filename)}`

export const MessagesHandlers = HttpApiBuilder.group(SwitchboardApi, "messages", (handlers) =>
  Effect.gen(function*() {
    const messaging = yield* Messaging
    const { media } = yield* AppSettings
    const sendMedia = (kind: MediaKind) => ({ path, request }: { path: { sessionId: string }; request: HttpServerRequest.HttpServerRequest }) =>
      readMediaRequest(request, kind, media.maxBytes).pipe(
        Effect.flatMap((input) => messaging.sendMedia(path.sessionId, input)),
        Effect.map((sent) => HttpServerResponse.unsafeJson(sent, { status: 201 })),
        Effect.scoped
      )
    return handlers
      .handle("sendText", answeringStoreOutage(({ path, payload }) => messaging.sendText(path.sessionId, payload)))
      .handleRaw("sendImage", answeringStoreOutage(sendMedia("image")))
      .handleRaw("sendVideo", answeringStoreOutage(sendMedia("video")))
      .handleRaw("sendAudio", answeringStoreOutage(sendMedia("audio")))
      .handleRaw("sendDocument", answeringStoreOutage(sendMedia("document")))
      .handleRaw("sendSticker", answeringStoreOutage(sendMedia("sticker")))
      .handle("sendLocation", answeringStoreOutage(({ path, payload }) => messaging.sendLocation(path.sessionId, payload)))
      .handle("sendContact", answeringStoreOutage(({ path, payload }) => messaging.sendContact(path.sessionId, payload)))
      .handle("sendPoll", answeringStoreOutage(({ path, payload }) => messaging.sendPoll(path.sessionId, payload)))
      .handle("react", answeringStoreOutage(({ path, payload }) => messaging.react(path.sessionId, payload)))
      .handleRaw("getMedia", answeringStoreOutage(({ path }) =>
        Effect.map(messaging.getMedia(path.sessionId, path.messageId), ({ filename, mimetype, size, stream }) =>
          // streamed from the media store; a read failing mid-way cuts the response short (its
          // length then tells the client), it is too late for an error status
          HttpServerResponse.stream(
            stream.pipe(Stream.tapErrorCause((cause) => Effect.logError("media store: streaming failed", cause))),
            {
              contentType: mimetype,
              contentLength: size,
              headers: filename === null ? {} : { "content-disposition": contentDisposition(filename) }
            }
          ))))
      .handle("sendBulk", answeringStoreOutage(({ path, payload }) => messaging.sendBulk(path.sessionId, payload)))
      .handle("getBatch", answeringStoreOutage(({ path }) => messaging.getBatch(path.sessionId, path.batchId)))
      .handle("cancelBatch", answeringStoreOutage(({ path }) => messaging.cancelBatch(path.sessionId, path.batchId)))
      .handle("markRead", answeringStoreOutage(({ path, payload }) => messaging.markRead(path.sessionId, payload)))
      .handle("list", answeringStoreOutage(({ path, urlParams }) =>
        Effect.gen(function*() {
          const page = pageRequestOf(urlParams)
          const { chatId, direction, status, since, until } = urlParams
          const filter = {
            chatId,
            direction,
            status,
            since: since && DateTime.formatIso(since),
            until: until && DateTime.formatIso(until)
          }
          return toListBody(page, yield* messaging.list(path.sessionId, filter, page))
        })))
      .handle("get", answeringStoreOutage(({ path }) => messaging.get(path.sessionId, path.messageId)))
  }))
