/**
 * Loopback WhatsApp Web peer for end-to-end tests of the real Baileys client (rc14), no internet.
 *
 * It plays WhatsApp's server (noise handshake, QR refs, login, iqs, acks, receipts) and the phones:
 * each account's phone links devices by scanning their QR, and fake contacts with real libsignal
 * identities exchange end-to-end encrypted messages with the linked client.
 *
 * ```ts
 * const peer = await startWaPeer()                   // 127.0.0.1, random port
 * makeWASocket({ waWebSocketUrl: peer.url, ... })    // "ws://127.0.0.1:<port>/ws/chat"
 * // connection.update { qr } →
 * await peer.scan(qr, { phone: "15551230001" })      // pair → stream:error 515 → client restarts
 * const bob = peer.contact("15551230002")            // fake contact (libsignal identity + LID)
 * await bob.send("15551230001", "hello")             // pkmsg from <lid>@lid, sender_pn=<phone>@s.whatsapp.net
 * await peer.waitFor("received", m => m.text === "hi")   // what the client sent bob, decrypted
 * peer.unlink("15551230001")   // stream:error 401 device_removed → Baileys closes with 401
 * peer.conflict("15551230001") // stream:error conflict replaced → 440
 * peer.drop("15551230001")     // socket cut → 428 (Baileys' "connection closed")
 * peer.silence("15551230001")  // socket left open, nothing answered: the client must notice by itself
 * await peer.close()
 * ```
 *
 * Media and reactions (./media.ts, ./media-server.ts, ./reactions.ts): the peer runs an HTTPS
 * media server on 127.0.0.1 with a fixed test certificate; a client must trust `peer.mediaCa`:
 * ```ts
 * makeWASocket({ ..., fetchAgent: new https.Agent({ ca: peer.mediaCa }) })   // uploads
 * downloadMediaMessage(msg, "buffer", { options: { dispatcher: new undici.Agent({ connect: { ca: peer.mediaCa } }) } })
 * const got = await peer.waitFor<ReceivedMessage>("received", m => m.media === "image")
 * (await peer.downloadMedia(got)).bytes                 // what the client uploaded, decrypted
 * await bob.sendMedia("15551230001", { kind: "document", bytes, mimetype: "application/pdf", fileName: "a.pdf" })
 * await bob.react("15551230001", messageId, "👍")       // "" removes; received reactions: m.reaction
 * ```
 *
 * Groups (./groups.ts, ./group-messages.ts, ./sender-keys.ts): the server's `w:g2` answers (create,
 * metadata, participating, participants, subject, description, settings, invites, leave) and its
 * `w:gp2` notifications to member accounts; group messages with sender keys both ways. Members
 * are accounts or fake contacts; what others do goes through `peer.groups` with `peer.member(...)`:
 * ```ts
 * const team = peer.groups.create(peer.member(BOB), "Team", [peer.member(ALICE)])  // <create> to Alice
 * peer.groups.setSubject(team, peer.member(BOB), "Renamed")                        // groups.update
 * await bob.sendToGroup(team.jid, "hi all")              // skmsg (+ the distribution, first time)
 * await peer.waitFor<ReceivedMessage>("received", m => m.group === team.jid && m.to === BOB)
 * peer.groups.queries / peer.distributions               // the w:g2 iqs and sender key handouts seen
 * ```
 *
 * Every kind of message (./kinds.ts, ./polls.ts, ./presence.ts). What clients send is recorded
 * whole (`m.message`, `m.kind`, `m.edit`, `m.target`, `m.editedText`; `contact.received()`), what contacts send is built as a
 * phone builds it; keys name targets from the sender's side:
 * ```ts
 * await bob.sendLocation(ALICE, { latitude: 52.37, longitude: 4.89, name: "Dam" })
 * await bob.sendContacts(ALICE, [{ name: "Carol", phone: "15551230003" }])   // contactMessage; 2+: contactsArrayMessage
 * await bob.sendSticker(ALICE, { bytes: webp })                               // uploaded like media
 * const pollId = await bob.sendPoll(ALICE, { name: "Lunch?", options: ["Pizza", "Sushi"] })   // V3 + messageSecret
 * await bob.edit(ALICE, myId, "fixed") / bob.revoke(ALICE, myId) / bob.pin(ALICE, id, { pinned: true })
 * await bob.vote(ALICE, alicesPollId, ["Sushi"])   // sealed with the poll's secret, LID-addressed
 * bob.votes()          // Alice's votes on polls in their chat, opened: { pollId, options, creator, voter }
 * bob.setPresence({ type: "unavailable", lastSeen }) // to sockets subscribed to Bob; answers later subscriptions
 * bob.sendChatstate(ALICE, "composing" | "recording" | "paused")
 * bob.chatstates() / bob.subscribers() / peer.presences   // what clients said (chatstate, subscribe, presence)
 * await peer.scan(qr, { phone, businessName: "Alice" })  // creds.me.name: Baileys sends <presence type> only with it
 * ```
 *
 * Profiles, blocking, join rules (./profiles.ts, ./group-requests.ts): abouts (usync `status`,
 * `<iq xmlns=status>`), pictures of people and groups (`w:profile:picture`, served by the media
 * server), business profiles (`w:biz`), blocklists, member-add mode, join approval and requests:
 * ```ts
 * peer.profiles.setAbout(peer.member(BOB), "Busy") / .setBusiness(...) / .setPicture(entity, jpeg | null)
 * peer.profiles.blockFromPhone(ALICE, peer.member(BOB), true)   // account_sync → blocklist.update
 * requestJoin(peer.groups, group, peer.member(CAROL))           // created_membership_requests → group.join-request
 * The account around the messages (./history.ts, ./calls.ts, ./status.ts):
 * ```ts
 * await peer.syncHistory(ALICE, [{ jid: pnJid(BOB), name: "Bob", unreadCount: 1, messages: [{ id, fromMe: true, text, at }] }])
 * peer.historyRequests / "history-request"   // a client's fetchMessageHistory, answered ON_DEMAND from what the phone holds
 * const callId = peer.offerCall(bob, ALICE, { isVideo: true }); peer.endCall(bob, ALICE, callId, "hangup" | "timeout" | "accept" | "reject")
 * peer.callRejects / "call-reject"           // a client's rejectCall: { phone, callId, creator }
 * peer.statuses / "status"                   // a client's status update: { participants, readers, text, message }
 * await peer.postStatus(bob, [ALICE], "at the beach")   // a contact's status update to accounts (sender key under status@broadcast)
 * ```
 *
 * Events (`peer.on` / `peer.waitFor`): `registering` (a client asked for QR refs), `paired`
 * (Account), `login` (Account), `ready` (Account: login queries answered, offline marker sent),
 * `pairing-code` (phone: a client called requestPairingCode; then `peer.enterCode(code, {phone})`),
 * `received` (ReceivedMessage), `receipt` ({ phone, id, type }), `presence` (ClientPresence), `peer-error` (Error).
 *
 * Signal sessions (./iq.ts): `m.enc` says how a received message was encrypted (`pkmsg` starts a
 * session with one of the contact's one-time prekeys, `msg` uses one, `skmsg` a group's sender key);
 * `peer.keyQueries` lists the clients' prekey fetches (`reason: "identity"` when they replace a
 * session they had) and device queries (usync `devices`), in order.
 *
 * Logins (`peer.logins`, `peer.loginsOf(phone)`, `peer.openLogins(phone)`, `peer.maxConcurrentLogins(phone)`):
 * every socket that logged in as an account, with when it was accepted, logged in and closed, and
 * how many other sockets of the account were still open at its login (a client that replaces
 * another: `concurrent` 1, `replaced` 1). A gateway in another process (`node dist/bundle/main.js`) reaches
 * the peer with `peer.processEnv()`: WA_WS_URL, and a preload that makes its Baileys trust the
 * peer's noise certificate (./trust-peer-root.mjs). `peer.handshakes` counts the sockets accepted
 * and those whose client finished the noise handshake (sent its login or registration payload);
 * `startWaPeer({ serverIdentity: "rogue-root" | "unbound-leaf" })` plays a server posing as
 * WhatsApp's, and `scan(qr, { forgedAccountSignature: true })` a forged pairing.
 *
 * Limits: the ADV secret exists only inside the QR, so a QR must be handed to `scan` (the peer
 * cannot scan by itself); one linked device per account (a member account's phone, not its linked
 * device, reads what a client sends a group); no app-state (labels, the push name setting, chat archive/pin/mute/unread/delete), `w:mex` (channels),
 * group retry receipts; media re-upload requests (after `peer.media.expire(url)`) are not answered;
 * stars are app-state (`star` mutations), which the peer does not read; contacts' votes are 1:1
 * only (a group poll's creator / voter JIDs are not modelled), and they send chatstates and
 * presence to accounts, never in groups (no `participant`).
 */
import { WaPeer, type WaPeerOptions } from "./peer.js"

export { WaPeer, type ScanOptions, type WaPeerOptions } from "./peer.js"
export { FakeContact, type AddressingOptions, type ContactPoll, type ReceivedMessage, type ReceivedVote, type SendOptions } from "./contacts.js"
export {
  contactsMessage,
  contentOf,
  contextInfoOf,
  editMessage,
  editedTextOf,
  forwardedMessage,
  kindOf,
  linkPreviewMessage,
  locationMessage,
  phoneVcard,
  pinMessage,
  revokeMessage,
  targetOf,
  type MessageKind,
  type OutgoingCard,
  type OutgoingLocation
} from "./kinds.js"
export { decryptPollVote, encryptPollVote, openPollVote, optionHash, pollCreationMessage, pollOf, type Addressing, type OpenedVote, type PollContext, type PollParty } from "./polls.js"
export { type Chatstate, type ClientPresence, type ContactPresence } from "./presence.js"
export { type DownloadedMedia, type MediaKind, type OutgoingMedia } from "./media.js"
export { MediaServer, type MediaRequest } from "./media-server.js"
export { type LoginRecord } from "./connection.js"
export { type ReceivedReaction } from "./reactions.js"
export { lidJid, pnJid, type Account } from "./pairing.js"
export { GroupDirectory, GroupError, PeerGroup, type ParticipantAction, type Role } from "./groups.js"
export { cancelJoinRequest, requestJoin } from "./group-requests.js"
export { ProfileDirectory, type PeerPicture } from "./profiles.js"
export { type Entity } from "./stanzas.js"
export { type KeyQuery } from "./iq.js"
export { peerCertificates } from "./frames.js"
export { type CallEnd, type CallReject } from "./calls.js"
export { type HistoryRequest, type PhoneChat, type PhoneMessage, type SyncType } from "./history.js"
export { type ReceivedStatus } from "./status.js"

export const startWaPeer = (options: WaPeerOptions = {}): Promise<WaPeer> => WaPeer.start(options)
