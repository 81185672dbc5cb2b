import { BlockList, isIP } from "node:net"

/** Whether the gateway may connect to an IP address on a caller's behalf (the SSRF guard). */
export type AddressPolicy = (address: string) => boolean

/** `MEDIA_ALLOW_PRIVATE=true`: any address will do. */
export const allowAnyAddress: AddressPolicy = () => true

// IPv4 ranges that are not globally reachable (IANA special-purpose registry, RFC 6890).
const reservedIpv4: ReadonlyArray<readonly [string, number]> = [
  ["0.0.0.0", 8], // "this network", including the unspecified 0.0.0.0
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, where cloud metadata services live
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast (deprecated)
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4] // reserved, including the broadcast 255.255.255.255
]

// IPv6 is judged by allow-list: only global unicast (2000::/3) reaches the internet, plus two
// forms that embed an IPv4 address, which are judged by that address.
const ipv6Reachable = new BlockList()
ipv6Reachable.addSubnet("2000::", 3, "ipv6")
ipv6Reachable.addSubnet("::ffff:0:0", 96, "ipv6") // IPv4-mapped (::ffff:127.0.0.1)
ipv6Reachable.addSubnet("64:ff9b::", 96, "ipv6") // NAT64 well-known prefix (64:ff9b::10.0.0.1)

const forbidden = new BlockList()
for (const [network, prefix] of reservedIpv4) {
  // BlockList matches IPv4 rules against IPv4-mapped IPv6 addresses by itself; NAT64 needs its own rule.
  forbidden.addSubnet(network, prefix, "ipv4")
  forbidden.addSubnet(`64:ff9b::${network}`, 96 + prefix, "ipv6")
}
forbidden.addSubnet("2001::", 23, "ipv6") // IETF protocol assignments, including Teredo (2001::/32)
forbidden.addSubnet("2001:db8::", 32, "ipv6") // documentation
forbidden.addSubnet("2002::", 16, "ipv6") // 6to4, which can embed any IPv4 address (deprecated)
forbidden.addSubnet("3fff::", 20, "ipv6") // documentation

/**
 * Whether an address is public: not loopback, private, link-local, CGNAT, unspecified,
 * multicast, broadcast, documentation or otherwise reserved, in either family or in an IPv6
 * form that embeds IPv4. Anything that is not an IP address at all is not public either.
 */
export const isPublicAddress: AddressPolicy = (address) => {
  const bare = address.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "") // URL brackets, zone id (fe80::1%eth0)
  switch (isIP(bare)) {
    case 4:
      return !forbidden.check(bare, "ipv4")
    case 6:
      return ipv6Reachable.check(bare, "ipv6") && !forbidden.check(bare, "ipv6")
    default:
      return false
  }
}
