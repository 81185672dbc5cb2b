/**
 * Sender keys: how WhatsApp encrypts a group message once for every member. Each sender keeps a
 * chain per group (key id, iteration, chain key, signing key). It hands the chain to each member
 * device once, inside an ordinary 1:1 Signal message (`senderKeyDistributionMessage { groupId,
 * axolotlSenderKeyDistributionMessage }`, in an `<enc type=pkmsg|msg>` per device), and encrypts
 * each group message once (`<enc type=skmsg>`, the same ciphertext for everyone).
 *
 * The crypto is libsignal's group cipher as Baileys ports it (lib/Signal/Group); senders are named
 * like Baileys' `jidToSignalSenderKeyName`: `<group>::<user>[_1 for LIDs]::<device>`.
 */
import {
  GroupCipher,
  GroupSessionBuilder,
  SenderKeyDistributionMessage,
  SenderKeyName,
  SenderKeyRecord
} from "@whiskeysockets/baileys/lib/Signal/Group/index.js"
import { ProtocolAddress } from "libsignal"

/** The Signal address of a sender's device: `<user>_1` for a LID (Baileys' domain suffix). */
export const lidSender = (lidUser: string, device = 0): ProtocolAddress => new ProtocolAddress(`${lidUser}_1`, device)

/** One party's sender keys: its own chains, and those other senders distributed to it. */
export class SenderKeys {
  private readonly records = new Map<string, SenderKeyRecord>()
  /** `<group>|<device>`: the devices this party already gave its chain for the group */
  private readonly distributed = new Set<string>()

  async loadSenderKey(name: SenderKeyName): Promise<SenderKeyRecord> {
    return this.records.get(name.toString()) ?? new SenderKeyRecord()
  }

  async storeSenderKey(name: SenderKeyName, record: SenderKeyRecord): Promise<void> {
    this.records.set(name.toString(), record)
  }

  /** The distribution message of this party's own chain for `group` (created on first use). */
  async distribution(group: string, self: ProtocolAddress): Promise<Uint8Array> {
    const skdm = await new GroupSessionBuilder(this).create(new SenderKeyName(group, self))
    return skdm.serialize()
  }

  /** True the first time it is asked about `device` in `group`: the distribution must go along. */
  firstTo(group: string, device: string): boolean {
    const key = `${group}|${device}`
    if (this.distributed.has(key)) return false
    this.distributed.add(key)
    return true
  }

  /**
   * Encrypt a (padded) message with this party's own chain: the `skmsg` body. The chain moves on:
   * a distribution for it must be taken before (see `distribution`).
   */
  async encrypt(group: string, self: ProtocolAddress, padded: Uint8Array): Promise<Uint8Array> {
    await this.distribution(group, self)
    return new GroupCipher(this, new SenderKeyName(group, self)).encrypt(padded)
  }

  /** Take in the chain `sender` distributed for `group`. */
  async process(group: string, sender: ProtocolAddress, distribution: Uint8Array): Promise<void> {
    const message = new SenderKeyDistributionMessage(null, null, null, null, distribution)
    await new GroupSessionBuilder(this).process(new SenderKeyName(group, sender), message)
  }

  has(group: string, sender: ProtocolAddress): boolean {
    return this.records.get(new SenderKeyName(group, sender).toString())?.isEmpty() === false
  }

  /** Decrypt a `skmsg` from `sender` (still padded). */
  async decrypt(group: string, sender: ProtocolAddress, ciphertext: Uint8Array): Promise<Uint8Array> {
    return new GroupCipher(this, new SenderKeyName(group, sender)).decrypt(ciphertext)
  }
}
