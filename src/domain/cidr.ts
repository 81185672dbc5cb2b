import { BlockList, isIP } from "node:net"

/**
 * Lists of IPv4/IPv6 networks (`10.0.0.0/8`, `2001:db8::/32`, or single addresses), for the
 * global allow-list, trusted proxies and a key's `allowedIps`. IPv4-mapped IPv6 addresses
 * (`::ffff:10.1.2.3`, how a dual-stack socket reports IPv4 peers) count as their IPv4 form.
 */
export interface NetworkList {
  readonly entries: ReadonlyArray<string>
  readonly contains: (address: string) => boolean
}

const mappedIpv4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i

/** The address as a list would see it: mapped IPv4 unwrapped, IPv6 zone dropped. */
export const normalizeAddress = (address: string) => {
  const trimmed = address.trim().replace(/%.*$/, "")
  const mapped = mappedIpv4.exec(trimmed)
  return mapped ? mapped[1]! : trimmed
}

/** Why `entry` is not a network, or undefined when it is one. */
export const cidrProblem = (entry: string): string | undefined => {
  const [address = "", prefix, extra] = entry.split("/")
  const family = isIP(address)
  if (family === 0 || extra !== undefined) return `"${entry}" is not an IPv4 or IPv6 address or CIDR`
  if (prefix === undefined) return undefined
  const max = family === 4 ? 32 : 128
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return `"${entry}" has a prefix length outside 0–${max}`
  return undefined
}

/** Builds a list from entries already checked with `cidrProblem`. */
export const networkList = (entries: ReadonlyArray<string>): NetworkList => {
  const list = new BlockList()
  for (const entry of entries) {
    const [raw = "", prefix] = entry.split("/")
    const address = normalizeAddress(raw)
    const family = isIP(address) === 6 ? "ipv6" : "ipv4"
    const length = prefix === undefined ? (family === "ipv4" ? 32 : 128) : Number(prefix) - (address !== raw ? 96 : 0)
    list.addSubnet(address, Math.max(0, length), family)
  }
  return {
    entries,
    contains: (candidate) => {
      const address = normalizeAddress(candidate)
      const family = isIP(address)
      if (family === 0) return false
      return list.check(address, family === 4 ? "ipv4" : "ipv6")
    }
  }
}

/** Splits a comma- or space-separated setting (`ALLOWED_CIDRS=10.0.0.0/8, ::1`). */
export const splitList = (text: string) => text.split(/[\s,]+/).filter((entry) => entry.length > 0)
