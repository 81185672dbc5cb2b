import { answeringStoreOutage } from "../ErrorResponses.js"
import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { AppSettings } from "../../domain/Settings.js"
import { ContactProfiles } from "../../services/ContactProfiles.js"
import { readPictureRequest } from "../mediaRequest.js"
import { Effect, Option } from "effect"
import { Channels } from "../../services/Channels.js"
import { Contacts } from "../../services/Contacts.js"
import { Groups } from "../../services/Groups.js"
import { Labels } from "../../services/Labels.js"
import { offsetOf, pageOfList, pageRequestOf, toListBody } from "../../domain/Pagination.js"
import { SwitchboardApi } from "../Api.js"
import { listed } from "../Pagination.js"

/** Channel posts fetched when no page is asked for. */
const DEFAULT_POSTS = 50

export const GroupsHandlers = HttpApiBuilder.group(SwitchboardApi, "groups", (handlers) =>
  Effect.gen(function*() {
    const groups = yield* Groups
    const { media } = yield* AppSettings
    return handlers
      .handle("list", answeringStoreOutage(({ path, urlParams }) =>
        listed(urlParams, (page) => groups.list(path.sessionId, page))))
      .handle("create", answeringStoreOutage(({ path, payload }) => groups.create(path.sessionId, payload.subject, payload.participants)))
      .handle("join", answeringStoreOutage(({ path, payload }) => groups.join(path.sessionId, payload.code)))
      .handle("get", answeringStoreOutage(({ path }) => groups.get(path.sessionId, path.groupId)))
      .handle("addParticipants", answeringStoreOutage(({ path, payload }) => groups.changeParticipants(path.sessionId, path.groupId, "add", payload.participants)))
      .handle("removeParticipants", answeringStoreOutage(({ path, payload }) => groups.changeParticipants(path.sessionId, path.groupId, "remove", payload.participants)))
      .handle("promote", answeringStoreOutage(({ path, payload }) => groups.changeParticipants(path.sessionId, path.groupId, "promote", payload.participants)))
      .handle("demote", answeringStoreOutage(({ path, payload }) => groups.changeParticipants(path.sessionId, path.groupId, "demote", payload.participants)))
      .handle("setSubject", answeringStoreOutage(({ path, payload }) => groups.setSubject(path.sessionId, path.groupId, payload.subject)))
      .handle("setDescription", answeringStoreOutage(({ path, payload }) => groups.setDescription(path.sessionId, path.groupId, payload.description)))
      .handle("leave", answeringStoreOutage(({ path }) => groups.leave(path.sessionId, path.groupId)))
      .handle("inviteCode", answeringStoreOutage(({ path }) => groups.inviteCode(path.sessionId, path.groupId)))
      .handle("revokeInvite", answeringStoreOutage(({ path }) => groups.revokeInvite(path.sessionId, path.groupId)))
      .handle("setSettings", answeringStoreOutage(({ path, payload }) => groups.setSettings(path.sessionId, path.groupId, payload)))
      .handleRaw("setPicture", answeringStoreOutage(({ path, request }: { path: { sessionId: string; groupId: string }; request: HttpServerRequest.HttpServerRequest }) =>
        readPictureRequest(request, media.maxBytes).pipe(
          Effect.flatMap((source) => groups.setPicture(path.sessionId, path.groupId, source)),
          Effect.as(HttpServerResponse.empty({ status: 204 })),
          Effect.scoped
        )))
      .handle("removePicture", answeringStoreOutage(({ path }) => groups.removePicture(path.sessionId, path.groupId)))
      .handle("joinRequests", answeringStoreOutage(({ path, urlParams }) =>
        listed(urlParams, (page) => Effect.map(groups.joinRequests(path.sessionId, path.groupId), (requests) => pageOfList(page, requests)))))
      .handle("approveRequests", answeringStoreOutage(({ path, payload }) => groups.answerJoinRequests(path.sessionId, path.groupId, "approve", payload.participants)))
      .handle("rejectRequests", answeringStoreOutage(({ path, payload }) => groups.answerJoinRequests(path.sessionId, path.groupId, "reject", payload.participants)))
  }))

export const ChannelsHandlers = HttpApiBuilder.group(SwitchboardApi, "channels", (handlers) =>
  Effect.gen(function*() {
    const channels = yield* Channels
    return handlers
      .handle("list", answeringStoreOutage(({ path, urlParams }) =>
        listed(urlParams, (page) => channels.list(path.sessionId, page))))
      .handle("create", answeringStoreOutage(({ path, payload }) => channels.create(path.sessionId, payload.name, payload.description ?? null)))
      .handle("subscribe", answeringStoreOutage(({ path, payload }) => channels.subscribe(path.sessionId, payload)))
      .handle("get", answeringStoreOutage(({ path }) => channels.get(path.sessionId, path.channelId)))
      .handle("remove", answeringStoreOutage(({ path }) => channels.remove(path.sessionId, path.channelId)))
      .handle("messages", answeringStoreOutage(({ path, urlParams }) =>
        Effect.gen(function*() {
          const page = pageRequestOf(urlParams)
          // The network serves the newest posts only: ask for as many as the page reaches.
          const wanted = Option.match(page, { onNone: () => DEFAULT_POSTS, onSome: (request) => offsetOf(request) + request.limit })
          const posts = yield* channels.messages(path.sessionId, path.channelId, wanted)
          return toListBody(page, pageOfList(page, posts))
        })))
  }))

export const LabelsHandlers = HttpApiBuilder.group(SwitchboardApi, "labels", (handlers) =>
  Effect.gen(function*() {
    const labels = yield* Labels
    return handlers
      .handle("list", answeringStoreOutage(({ path, urlParams }) =>
        listed(urlParams, (page) => labels.list(path.sessionId, page))))
      .handle("create", answeringStoreOutage(({ path, payload }) => labels.create(path.sessionId, payload.name, payload.color ?? null)))
      .handle("ofChat", answeringStoreOutage(({ path }) => labels.ofChat(path.sessionId, path.chatId)))
      .handle("addToChat", answeringStoreOutage(({ path, payload }) => labels.addToChat(path.sessionId, path.chatId, payload.labelId)))
      .handle("removeFromChat", answeringStoreOutage(({ path }) => labels.removeFromChat(path.sessionId, path.chatId, path.labelId)))
  }))

export const ContactsHandlers = HttpApiBuilder.group(SwitchboardApi, "contacts", (handlers) =>
  Effect.gen(function*() {
    const contacts = yield* Contacts
    const people = yield* ContactProfiles
    return handlers
      .handle("check", answeringStoreOutage(({ path }) => contacts.check(path.sessionId, path.number.replace(/^\+/, ""))))
      .handle("list", answeringStoreOutage(({ path, urlParams }) =>
        listed(urlParams, (page) => contacts.list(path.sessionId, page))))
      .handle("blocklist", answeringStoreOutage(({ path, urlParams }) =>
        listed(urlParams, (page) => people.blocklist(path.sessionId, page))))
      .handle("byLid", answeringStoreOutage(({ path }) => people.lookupIds(path.sessionId, path.lid.endsWith("@lid") ? path.lid : `${path.lid}@lid`)))
      .handle("lidOf", answeringStoreOutage(({ path }) => people.lookupIds(path.sessionId, path.chatId)))
      .handle("details", answeringStoreOutage(({ path }) => people.details(path.sessionId, path.chatId)))
      .handle("picture", answeringStoreOutage(({ path, urlParams }) =>
        urlParams.format === "image"
          ? people.picture(path.sessionId, path.chatId)
          : Effect.map(people.pictureUrl(path.sessionId, path.chatId), (url): { readonly url: string | null } | Uint8Array => ({ url }))))
      .handle("block", answeringStoreOutage(({ path }) => people.setBlocked(path.sessionId, path.chatId, true)))
      .handle("unblock", answeringStoreOutage(({ path }) => people.setBlocked(path.sessionId, path.chatId, false)))
  }))
