/**
 * Preloaded into a gateway process (`node --import`, see `WaPeer.processEnv`) whose Baileys
 * connects to a loopback peer running in another process: Baileys checks the peer's noise
 * certificate chain against `WA_CERT_DETAILS`, so it must trust the peer's root instead of
 * WhatsApp's (what `peerCertificates()` does in the peer's own process). The root's public key
 * comes as hex in WA_PEER_ROOT_KEY; without it nothing changes.
 */
import { WA_CERT_DETAILS } from "@whiskeysockets/baileys"

const root = process.env.WA_PEER_ROOT_KEY
if (root) {
  WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(root, "hex")
  WA_CERT_DETAILS.SERIAL = 0
}
