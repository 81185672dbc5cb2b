import { createHmac, createSecretKey, type KeyObject } from "node:crypto"

const SECRET_PREFIX = "whsec_"

/** The key a `whsec_…` secret stands for: the bytes of the base64 after the prefix. */
export const signingKey = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64")

/**
 * The keys of the secrets in use, decoded once rather than at every attempt. A gateway has few
 * webhooks; the map is emptied if rotated secrets ever make it large.
 */
const keys = new Map<string, KeyObject>()
const MAX_KEYS = 1_000

const keyOf = (secret: string): KeyObject => {
  let key = keys.get(secret)
  if (key === undefined) {
    if (keys.size >= MAX_KEYS) keys.clear()
    key = createSecretKey(signingKey(secret))
    keys.set(secret, key)
  }
  return key
}

/**
 * The `webhook-signature` header of one attempt, per the Standard Webhooks spec:
 * `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`. The timestamp is the attempt's, in
 * unix seconds, so every retry carries a fresh signature over the same id and body.
 */
export const signatureHeader = (secret: string, id: string, timestampSeconds: number, body: string): string =>
  `v1,${createHmac("sha256", keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`
