import { Effect } from "effect"
import { EngineError } from "../Engine.js"
import type {
  AccountContactOperations,
  CallOperations,
  ChatOperations,
  GroupAdminOperations,
  ProfileOperations
} from "../EngineAccount.js"

// TEMPORARY (issue 18 in progress): replaced by each engine's implementation before the issue lands.
const refuse = (what: string) =>
  Effect.fail(new EngineError({ code: "NOT_SUPPORTED", message: `${what} is not supported yet`, transient: false, refusal: "not_supported" }))

export const notYetChats: ChatOperations = {
  modify: () => refuse("chat changes"),
  requestHistory: () => refuse("history")
}

export const notYetProfile: ProfileOperations = {
  get: refuse("the profile"),
  setName: () => refuse("the profile"),
  setAbout: () => refuse("the profile"),
  setPicture: () => refuse("the profile")
}

export const notYetAccountContacts: AccountContactOperations = {
  profile: () => refuse("contact profiles"),
  pictureUrl: () => refuse("pictures"),
  downloadPicture: () => refuse("pictures"),
  setBlocked: () => refuse("blocking"),
  blocklist: refuse("blocking"),
  resolveIds: () => refuse("LID lookups")
}

export const notYetCalls: CallOperations = {
  reject: () => refuse("calls")
}

export const notYetGroupAdmin: GroupAdminOperations = {
  setSettings: () => refuse("group settings"),
  setPicture: () => refuse("group pictures"),
  joinRequests: () => refuse("join requests"),
  answerJoinRequests: () => refuse("join requests")
}
