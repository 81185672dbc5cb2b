import { Clock, Effect, HashMap, Option, Ref } from "effect"
import type { Channel, ChannelMessage } from "../../../domain/Channel.js"
import type { ChannelOperations } from "../../EngineDirectory.js"
import { type ChannelRecord, type Directory, refuse } from "./Directory.js"
import { newChannelId, newInviteCode } from "./identity.js"
import { contentRecordOf, messageTypeOf, type Payload, received, summaryOf } from "./Messaging.js"
import type { Line, Switchboard } from "./Switchboard.js"

/**
 * Channels (newsletters) on the sandbox network. The creating session owns its channel: only it
 * posts (a `send` to the channel's id) and deletes it. Any session may look a channel up and
 * read its recent posts (it is a `guest` until it follows); following is by id or invite code.
 * Each post is kept with the channel and reaches every follower's session as a message from the
 * channel. Runs under the network's lock.
 */

/** The channel keeps this many of its newest posts. */
export const maxChannelPosts = 200

const channelNotFound = (what: string) => refuse("not_found", "CHANNEL_NOT_FOUND", `no channel ${what}`)
const notOwner = refuse("forbidden", "NOT_CHANNEL_OWNER", "only the channel's owner may do that")
const notFollower = (channelId: string) => refuse("forbidden", "NOT_CHANNEL_FOLLOWER", `this session does not follow the channel ${channelId}`)

/** The channel as this session sees it; `subscribers` counts followers, not the owner. */
const view = (channel: ChannelRecord, line: Line): Channel => ({
  id: channel.id,
  name: channel.name,
  description: channel.description,
  inviteCode: channel.inviteCode,
  subscribers: channel.subscriberPhones.length,
  role: channel.ownerPhone === line.me.phone
    ? "owner"
    : channel.subscriberPhones.includes(line.me.phone) ? "subscriber" : "guest",
  createdAt: channel.createdAt
})

export const channelsOf = (switchboard: Switchboard, directory: Directory) => {
  const { handTo, recordNew } = switchboard
  const { channels, lookup, putChannel, sessionsOf } = directory

  const existing = (channelId: string) =>
    lookup(channels, channelId).pipe(Effect.flatMap(Option.match({
      onNone: () => Effect.fail(channelNotFound(channelId)),
      onSome: Effect.succeed
    })))

  const owned = (line: Line, channelId: string) =>
    existing(channelId).pipe(Effect.filterOrFail((channel) => channel.ownerPhone === line.me.phone, () => notOwner))

  const create = (line: Line, name: string, description: string | null) =>
    Effect.gen(function*() {
      const channel: ChannelRecord = {
        id: yield* newChannelId,
        name,
        description,
        ownerPhone: line.me.phone,
        inviteCode: yield* newInviteCode,
        createdAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
        subscriberPhones: [],
        posts: []
      }
      yield* putChannel(channel.id, channel)
      return view(channel, line)
    })

  /** Following again, or the owner following its own channel, changes nothing. */
  const subscribe = (line: Line, target: { readonly channelId: string } | { readonly inviteCode: string }) =>
    Effect.gen(function*() {
      const channel = "channelId" in target
        ? yield* existing(target.channelId)
        : yield* Ref.get(channels).pipe(Effect.flatMap((all) =>
          Option.match(Option.fromNullable(Array.from(HashMap.values(all)).find((candidate) => candidate.inviteCode === target.inviteCode)), {
            onNone: () => Effect.fail(channelNotFound("with that invite code")),
            onSome: Effect.succeed
          })
        ))
      if (channel.ownerPhone === line.me.phone || channel.subscriberPhones.includes(line.me.phone)) return view(channel, line)
      const following = { ...channel, subscriberPhones: [...channel.subscriberPhones, line.me.phone] }
      yield* putChannel(channel.id, following)
      return view(following, line)
    })

  /** Unfollowing a channel one does not follow (or owns) changes nothing. */
  const unsubscribe = (line: Line, channelId: string) =>
    Effect.gen(function*() {
      const channel = yield* existing(channelId)
      if (!channel.subscriberPhones.includes(line.me.phone)) return
      yield* putChannel(channelId, { ...channel, subscriberPhones: channel.subscriberPhones.filter((phone) => phone !== line.me.phone) })
    })

  const messages = (channelId: string, count: number) =>
    existing(channelId).pipe(Effect.map((channel) =>
      channel.posts.slice(0, Math.max(0, count)).map((post): ChannelMessage => ({ ...post, channelId }))
    ))

  /**
   * The owner posts: the post is kept (the newest `maxChannelPosts`) and every follower's session
   * receives it from the channel. Followers send no receipts to a channel: the post stays at `sent`.
   */
  const toChannel = (line: Line, engineMessageId: string, channelId: string, payload: Payload, timestamp: Date) =>
    Effect.gen(function*() {
      const channel = yield* owned(line, channelId)
      const post = {
        id: engineMessageId,
        type: messageTypeOf(payload),
        text: summaryOf(payload),
        timestamp: timestamp.toISOString()
      }
      yield* putChannel(channelId, { ...channel, posts: [post, ...channel.posts].slice(0, maxChannelPosts) })
      yield* recordNew(engineMessageId, {
        senderSessionId: line.sessionId,
        senderPhone: line.me.phone,
        recipientPhone: channelId,
        timestamp,
        status: "pending",
        awaiting: { delivered: [], read: [] },
        ...contentRecordOf(payload)
      })
      const event = received({ engineMessageId, chatId: channelId, from: channelId, fromLid: null }, payload, timestamp)
      const followers = yield* sessionsOf(channel.subscriberPhones.map((phone) => `${phone}@c.us`))
      yield* Effect.forEach(followers, ({ sessionId }) => handTo(sessionId, event), { discard: true })
    })

  /**
   * Whom a session's doings to a channel's posts reach, and as whom: the owner's (edits, revokes,
   * pins) reach the followers from the channel, as its posts do; a follower's (a poll vote) the owner.
   */
  const audienceOf = (line: Line, channelId: string) =>
    Effect.gen(function*() {
      const channel = yield* existing(channelId)
      if (channel.ownerPhone === line.me.phone) {
        return { from: channelId, sessions: yield* sessionsOf(channel.subscriberPhones.map((phone) => `${phone}@c.us`)) }
      }
      if (!channel.subscriberPhones.includes(line.me.phone)) return yield* notFollower(channelId)
      return { from: `${line.me.phone}@c.us`, sessions: yield* sessionsOf([`${channel.ownerPhone}@c.us`]) }
    })

  /** The owner edited (new text) or revoked (`null`) a post: the channel's list of posts shows it so. */
  const revisePost = (channelId: string, postId: string, text: string | null) =>
    existing(channelId).pipe(Effect.flatMap((channel) =>
      putChannel(channelId, {
        ...channel,
        posts: text === null
          ? channel.posts.filter((post) => post.id !== postId)
          : channel.posts.map((post) => post.id === postId ? { ...post, text } : post)
      })
    ))

  const operations = (line: Line): ChannelOperations => {
    const run = directory.onBehalfOf(line)
    return {
      create: (name, description) => run(create(line, name, description)),
      get: (channelId) => run(Effect.map(existing(channelId), (channel) => view(channel, line))),
      delete: (channelId) => run(Effect.flatMap(owned(line, channelId), () => putChannel(channelId, null))),
      subscribe: (target) => run(subscribe(line, target)),
      unsubscribe: (channelId) => run(unsubscribe(line, channelId)),
      messages: (channelId, count) => run(messages(channelId, count))
    }
  }

  return { operations, toChannel, audienceOf, revisePost }
}
