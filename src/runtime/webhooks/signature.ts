import { createHmac } from "node:crypto"

const SECRET_PREFIX = "whsec_"

/** The key a `whsec_…` secret stands for: the bytes of the base64 after the prefix. */
export const signingKey = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64")

/**
 * The `webhook-signature` header of one attempt, per the Standard Webhooks spec:
 * `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`. The timestamp is the attempt's, in
 * unix seconds, so every retry carries a fresh signature over the same id and body.
 */
export const signatureHeader = (secret: string, id: string, timestampSeconds: number, body: string): string =>
  `v1,${createHmac("sha256", signingKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`
