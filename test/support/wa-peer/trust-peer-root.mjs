/**
 * Preloaded into a gateway process (`node --import`, see `WaPeer.processEnv`) whose Baileys
 * connects to a loopback peer running in another process: the peer signs its noise certificate
 * chain with a root of its own, so the process must trust that root instead of WhatsApp's (what
 * `peerCertificates()` does in the peer's own process): Baileys' own check reads
 * `WA_CERT_DETAILS`, the gateway's engine the test root under the symbol below
 * (src/runtime/engines/baileys/serverIdentity.ts). The root's public key comes as hex in
 * WA_PEER_ROOT_KEY; without it nothing changes.
 */
import { WA_CERT_DETAILS } from "@whiskeysockets/baileys"

const root = process.env.WA_PEER_ROOT_KEY
if (root) {
  WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(root, "hex")
  WA_CERT_DETAILS.SERIAL = 0
  globalThis[Symbol.for("switchboard.baileys.testServerRoot")] = { serial: 0, publicKey: Buffer.from(root, "hex") }
}
