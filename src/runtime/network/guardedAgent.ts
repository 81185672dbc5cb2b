import { lookup } from "node:dns"
import type { LookupFunction } from "node:net"
import { Agent } from "undici"
import type { AddressPolicy } from "./addressPolicy.js"

/** A host name resolved to an address the policy refuses; undici reports it as the `cause` of its error. */
export class AddressNotAllowed extends Error {
  constructor(readonly hostname: string) {
    super(`${hostname} resolves to an address that is not allowed`)
    this.name = "AddressNotAllowed"
  }
}

/**
 * A DNS lookup that refuses a name when ANY of its addresses is refused by the policy, so a
 * name with one public and one private address cannot be used to reach the private one.
 */
export const guardedLookup = (isAllowed: AddressPolicy): LookupFunction => (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, [])
    if (addresses.length === 0 || addresses.some(({ address }) => !isAllowed(address))) {
      return callback(new AddressNotAllowed(hostname), [])
    }
    if (options.all) return callback(null, addresses)
    const [first] = addresses
    return callback(null, first!.address, first!.family)
  })
}

/**
 * An undici dispatcher whose every connection is checked against the policy in the lookup
 * itself: the addresses checked are the ones connected to, so a name that resolves to a public
 * address for a check and to a private one a moment later (DNS rebinding) gets nowhere.
 *
 * Node skips the lookup for IP literals (`http://10.0.0.1/`): callers check those themselves.
 */
export const makeGuardedAgent = (isAllowed: AddressPolicy): Agent => new Agent({ connect: { lookup: guardedLookup(isAllowed) } })
