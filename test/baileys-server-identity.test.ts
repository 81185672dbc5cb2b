import { Curve, WA_CERT_DETAILS } from "@whiskeysockets/baileys"
import { Duration, Effect, Exit, Layer, Scope } from "effect"
import { randomBytes } from "node:crypto"
import { createRequire } from "node:module"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { BaileysEngineLive } from "../src/entry/baileys.js"
import { verifyCurveSignature } from "../src/runtime/engines/baileys/curveSignature.js"
import { WHATSAPP_ROOT } from "../src/runtime/engines/baileys/serverIdentity.js"
import { eventually, startGatewayWith, tempDir, TEST_KEY, type TestGateway } from "./support/gateway.js"
import { useGatewayProcesses } from "./support/process.js"
import { peerCertificates, startWaPeer, type WaPeer, type WaPeerOptions } from "./support/wa-peer/index.js"
import { TEST_SERVER_ROOT } from "./support/wa-peer/frames.js"

/**
 * Server identity (issue 21, point 6): the Baileys engine talks only to a server that proves it
 * is WhatsApp's, with a certificate chain from WhatsApp's root key to the static key it uses in
 * the noise handshake. Against loopback peers posing as WhatsApp (a chain under a root of their
 * own; the trusted chain replayed with another key) the session fails at once with
 * SERVER_IDENTITY_INVALID, is not retried, and the peer never receives the client's login or
 * registration payload; the trusted peer still links, and a pairing whose account signature does
 * not verify is refused. The root trusted by default is WhatsApp's: without the test's root (in
 * this process, or in the built gateway without the test preload) the peer itself is refused.
 */

// Baileys' shipped root, read before any peer makes this process trust its own.
const baileysRoot = Buffer.from(WA_CERT_DETAILS.PUBLIC_KEY)

const peers: WaPeer[] = []
const scopes: Scope.CloseableScope[] = []
afterAll(async () => {
  for (const scope of scopes) await Effect.runPromise(Scope.close(scope, Exit.void))
  for (const peer of peers) await peer.close()
})

const peerWith = async (options: WaPeerOptions): Promise<WaPeer> => {
  const peer = await startWaPeer(options)
  peers.push(peer)
  return peer
}

/** A gateway whose Baileys engine connects to `peer`, reconnecting after 100 ms if it were to. */
const gatewayFor = async (peer: WaPeer): Promise<Omit<TestGateway, "network">> => {
  const scope = await Effect.runPromise(Scope.make())
  scopes.push(scope)
  const dataDir = tempDir("switchboard-server-identity-")
  return Effect.runPromise(Scope.extend(
    startGatewayWith(BaileysEngineLive({ waWebSocketUrl: peer.url, mediaCa: peer.mediaCa }), {
      dataDir,
      databaseUrl: `sqlite:${dataDir}/switchboard.db`,
      engine: "baileys",
      reconnect: { initialDelay: Duration.millis(100), maxDelay: Duration.millis(200), maxAttempts: 10, healthyAfter: Duration.seconds(30) }
    }),
    scope
  ))
}

/** Starts a session against `peer`; resolves once it failed, with the session as the API shows it. */
const failedSession = async (peer: WaPeer) => {
  const gateway = await gatewayFor(peer)
  const created = await gateway.call("POST", "/api/sessions", { body: { name: "identity", autoStart: true } })
  const failed = await eventually(() => gateway.call("GET", `/api/sessions/${created.body.id}`), (r) => r.body.status === "failed", 15_000)
  // Time for several reconnects, had the refusal been taken for a dropped connection.
  await new Promise((resolve) => setTimeout(resolve, 1_500))
  const after = await gateway.call("GET", `/api/sessions/${created.body.id}`)
  return { failed: failed.body, after: after.body }
}

describe("a server posing as WhatsApp's is refused before any credentials are sent", () => {
  it.each([
    ["a chain under another root than the trusted one", "rogue-root", "not signed by WhatsApp's root key"],
    ["the trusted chain replayed with a static key of the server's own", "unbound-leaf", "for another key than the one it used in the handshake"]
  ] as const)("%s: failed, SERVER_IDENTITY_INVALID, not retried, no credentials sent", async (_, serverIdentity, why) => {
    const peer = await peerWith({ serverIdentity })
    const { failed, after } = await failedSession(peer)
    expect(failed.lastError.code).toBe("SERVER_IDENTITY_INVALID")
    expect(failed.lastError.message).toContain(why)
    expect(after.status).toBe("failed")
    // One socket, never retried; its handshake stopped before the client's payload.
    expect(peer.handshakes).toEqual({ accepted: 1, finished: 0 })
  }, 30_000)
})

describe("the trusted server", () => {
  const testRoot = () => (globalThis as Record<symbol, unknown>)[TEST_SERVER_ROOT]
  let saved: unknown
  afterEach(() => {
    ;(globalThis as Record<symbol, unknown>)[TEST_SERVER_ROOT] = saved
  })

  it("is let in: a session links by QR and is ready", async () => {
    const peer = await peerWith({})
    saved = testRoot()
    const gateway = await gatewayFor(peer)
    const created = await gateway.call("POST", "/api/sessions", { body: { name: "trusted", autoStart: true } })
    const qr = await eventually(() => gateway.call("GET", `/api/sessions/${created.body.id}/qr`), (r) => r.status === 200, 15_000)
    await peer.scan(qr.body.qr, { phone: "15550006001" })
    await eventually(() => gateway.call("GET", `/api/sessions/${created.body.id}`), (r) => r.body.status === "ready", 15_000)
    expect(peer.accounts.get("15550006001")?.linked).toBe(true)
  }, 30_000)

  it("a pairing whose account signature does not verify is refused: the device is not linked, and the session offers a new QR", async () => {
    const peer = await peerWith({})
    saved = testRoot()
    const gateway = await gatewayFor(peer)
    const created = await gateway.call("POST", "/api/sessions", { body: { name: "forged-pairing", autoStart: true } })
    const session = () => gateway.call("GET", `/api/sessions/${created.body.id}`)
    const qr = await eventually(() => gateway.call("GET", `/api/sessions/${created.body.id}/qr`), (r) => r.status === 200, 15_000)
    // The peer waits for the client's signed device identity, which never comes.
    await expect(peer.scan(qr.body.qr, { phone: "15550006002", forgedAccountSignature: true })).rejects.toThrow()
    expect(peer.accounts.get("15550006002")).toBeUndefined()
    const refused = await eventually(session, (r) => r.body.lastError !== null, 15_000)
    expect(refused.body.lastError.message).toContain("Failed to verify account signature")
    const next = await eventually(() => gateway.call("GET", `/api/sessions/${created.body.id}/qr`), (r) => r.status === 200 && r.body.qr !== qr.body.qr, 15_000)
    expect(next.body.qr).toContain("2@")
    expect((await session()).body.status).not.toBe("ready")
  }, 40_000)

  it("is WhatsApp's by default: without the test's root the engine refuses the loopback peer", async () => {
    const peer = await peerWith({})
    saved = testRoot()
    delete (globalThis as Record<symbol, unknown>)[TEST_SERVER_ROOT]
    const { failed } = await failedSession(peer)
    expect(failed.lastError.code).toBe("SERVER_IDENTITY_INVALID")
    expect(peer.handshakes.finished).toBe(0)
    // The root trusted then is the one Baileys ships (and whatsmeow: WhatsAppLongTerm1).
    expect(Buffer.from(WHATSAPP_ROOT.publicKey).equals(baileysRoot)).toBe(true)
    expect(Buffer.from(WHATSAPP_ROOT.publicKey).equals(peerCertificates().rootPublicKey)).toBe(false)
  }, 30_000)
})

describe("the built gateway (node dist/bundle/main.js)", () => {
  const spawnGateway = useGatewayProcesses()

  /** The session's first state of note against the peer `env` names: its QR shown, or its failure. */
  const firstOutcome = async (env: Record<string, string>) => {
    const gateway = await spawnGateway({ dataDir: tempDir("switchboard-server-identity-process-"), env: { API_KEY: TEST_KEY, ENGINE: "baileys", ...env } })
    const created = await gateway.call("POST", "/api/sessions", { body: { name: "identity", autoStart: true } })
    const session = await eventually(
      () => gateway.call("GET", `/api/sessions/${created.body.id}`),
      (r) => r.body.status === "qr_ready" || r.body.status === "failed",
      20_000
    )
    await gateway.kill()
    return session.body
  }

  it("trusts WhatsApp's root only: refuses the loopback peer, and lets it in once a test preload trusts the peer's root", async () => {
    const peer = await peerWith({})
    const refused = await firstOutcome({ WA_WS_URL: peer.url })
    expect(refused.status).toBe("failed")
    expect(refused.lastError.code).toBe("SERVER_IDENTITY_INVALID")
    expect(peer.handshakes.finished).toBe(0)
    const trusted = await firstOutcome(peer.processEnv())
    expect(trusted.status).toBe("qr_ready")
    expect(peer.handshakes.finished).toBe(1)
  }, 90_000)
})

describe("signatures are checked", () => {
  const libsignal = createRequire(import.meta.url)("libsignal/src/curve.js") as {
    verifySignature(publicKey: Buffer, message: Uint8Array, signature: Uint8Array): boolean
  }
  const libsignalVerify = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean => {
    try {
      return libsignal.verifySignature(Buffer.concat([Buffer.from([5]), publicKey]), message, signature)
    } catch {
      return false
    }
  }

  it("a Curve25519 signature verifies as libsignal verifies it: true when genuine, false when anything was changed", () => {
    for (let i = 0; i < 40; i++) {
      const key = Curve.generateKeyPair()
      const message = randomBytes(1 + i * 3)
      const signature = Curve.sign(key.private, message)
      expect(verifyCurveSignature(key.public, message, signature)).toBe(true)
      const otherMessage = Buffer.from(message)
      otherMessage[i % message.length]! ^= 1
      expect(verifyCurveSignature(key.public, otherMessage, signature)).toBe(false)
      const otherSignature = Buffer.from(signature)
      otherSignature[(i * 7) % 64]! ^= 1 << (i % 8)
      expect(verifyCurveSignature(key.public, message, otherSignature)).toBe(libsignalVerify(key.public, message, otherSignature))
      expect(verifyCurveSignature(key.public, message, otherSignature)).toBe(false)
      expect(verifyCurveSignature(Curve.generateKeyPair().public, message, signature)).toBe(false)
    }
  }, 60_000)

  it("once the engine is built, Baileys' Curve.verify answers false for a forged signature (it answered true)", async () => {
    await Effect.runPromise(Effect.scoped(Layer.build(BaileysEngineLive())))
    const key = Curve.generateKeyPair()
    const message = Buffer.from("pairing")
    expect(Curve.verify(key.public, message, Curve.sign(key.private, message))).toBe(true)
    expect(Curve.verify(key.public, message, Curve.sign(Curve.generateKeyPair().private, message))).toBe(false)
  })
})
