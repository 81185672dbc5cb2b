import type { Contact, WASocket } from "@whiskeysockets/baileys"
import { Effect } from "effect"
import { EngineError } from "../../Engine.js"
import type { OwnProfile, ProfileOperations } from "../../EngineAccount.js"
import { engineErrorOf, iqErrorOf, iqFailureOf } from "./disconnect.js"

/**
 * The account's own profile through Baileys (lib/Socket/chats.js).
 *
 * - The name is the push name Baileys keeps in `creds.me.name`; setting it is an app-state
 *   patch (`chatModify({ pushNameSetting })`), so it needs the app-state keys the phone hands
 *   out after linking.
 * - The about text is the usync `status` protocol for the own JID (`fetchStatus`), set with
 *   `<iq xmlns=status type=set>` (`updateProfileStatus`).
 * - The picture is `<iq xmlns=w:profile:picture>`: `profilePictureUrl` reads it (WhatsApp answers
 *   404 when there is none, 401 when it is hidden), `updateProfilePicture` sets it and
 *   `removeProfilePicture` removes it. Baileys re-encodes what it is given with sharp (resized to
 *   640×640, JPEG quality 50): the gateway's 640×640 JPEG goes through that unchanged in size.
 */

export type ProfileSocket = Pick<
  WASocket,
  "fetchStatus" | "profilePictureUrl" | "updateProfileName" | "updateProfileStatus" | "updateProfilePicture" | "removeProfilePicture"
>

/** What the usync `status` protocol answers for one user (USyncStatusProtocol's parser). */
interface StatusEntry {
  readonly id: string
  readonly status?: { readonly status: string | null } | null
}

/** Not there (404) or not shown to the account (401): no picture, as far as it can tell. */
const isNoPicture = (error: unknown) => {
  const code = iqErrorOf(error)?.code
  return code === 404 || code === 401
}

/** A picture's URL, or null when WhatsApp says there is none or it is hidden. */
export const pictureUrlOf = (sock: Pick<WASocket, "profilePictureUrl">, jid: string, operation: string) =>
  Effect.tryPromise({ try: () => sock.profilePictureUrl(jid, "image"), catch: (error) => error }).pipe(
    Effect.map((url) => url ?? null),
    Effect.catchAll((error) => (isNoPicture(error) ? Effect.succeed(null) : Effect.fail(iqFailureOf(operation, error))))
  )

/**
 * The about text of one user: `undefined` when WhatsApp does not know them, null when they
 * have none or hide it ("" in Baileys' terms when hidden).
 */
export const aboutOf = (sock: Pick<WASocket, "fetchStatus">, jid: string, operation: string) =>
  Effect.tryPromise({ try: () => sock.fetchStatus(jid), catch: (error) => error }).pipe(
    Effect.catchAll((error) =>
      iqErrorOf(error)?.code === 404 ? Effect.succeed(undefined) : Effect.fail(iqFailureOf(operation, error))
    ),
    Effect.map((list) => {
      const entry = (list as ReadonlyArray<StatusEntry> | undefined)?.find((item) => item.status != null)
      if (entry === undefined) return undefined
      const text = entry.status?.status
      return text === null || text === undefined || text === "" ? null : text
    })
  )

const noName = () => new EngineError({ code: "PROFILE_NAME_INVALID", message: "baileys: a profile name must not be empty", transient: false, refusal: "invalid" })

export const makeProfileOperations = (sock: ProfileSocket, me: () => Contact | undefined): ProfileOperations => {
  const ownJid = Effect.suspend(() => {
    const id = me()?.id
    return id === undefined
      ? Effect.fail(new EngineError({ code: "NOT_LOGGED_IN", message: "baileys: the account is not logged in", transient: true }))
      : Effect.succeed(id)
  })
  return {
    get: Effect.gen(function*() {
      const jid = yield* ownJid
      const [about, pictureUrl] = yield* Effect.all([aboutOf(sock, jid, "PROFILE"), pictureUrlOf(sock, jid, "PROFILE")], { concurrency: 2 })
      return { name: me()?.name || me()?.notify || null, about: about ?? null, pictureUrl } satisfies OwnProfile
    }),
    setName: (name) =>
      name.trim() === ""
        ? Effect.fail(noName())
        : Effect.tryPromise({ try: () => sock.updateProfileName(name), catch: (error) => engineErrorOf("PROFILE_NAME", error) }),
    setAbout: (about) =>
      Effect.tryPromise({ try: () => sock.updateProfileStatus(about), catch: (error) => engineErrorOf("PROFILE_ABOUT", error) }),
    setPicture: (jpeg) =>
      Effect.flatMap(ownJid, (jid) =>
        Effect.tryPromise({
          try: () => (jpeg === null ? sock.removeProfilePicture(jid) : sock.updateProfilePicture(jid, Buffer.from(jpeg))),
          catch: (error) => engineErrorOf("PROFILE_PICTURE", error)
        }))
  }
}
