import fc from "fast-check"
import { Effect, Exit, Logger, LogLevel, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SwitchboardApi } from "../src/http/Api.js"
import { type Endpoint, endpointsOf } from "../src/http/Endpoints.js"
import { readySession, startGateway, TEST_KEY, type TestGateway } from "./support/gateway.js"
import { base64, png } from "./support/mediaSamples.js"
import { type RawAnswer, type RawRequest, rawRequest } from "./support/rawHttp.js"

/**
 * Every endpoint of the contract, fed what a careless or hostile client sends: malformed and
 * mistyped JSON, huge and deeply nested bodies, odd unicode, junk ids, query strings, headers,
 * content types and multipart. Whatever comes in, the gateway answers with a status below 500,
 * every refusal in the contract's error shape (`ErrorBody`, src/domain/Errors.ts), and it goes
 * on working. A failure prints fast-check's seed; `fc.assert(…, { seed, path })` replays it.
 */

const BODY_MAX = 1024 * 1024

// ---- values ---------------------------------------------------------------------------------

const awkward = [
  "", " ", "\u0000", "a\u0000b", "\ud800", "\udfff", "x\udc00y", "\u202eevil\u202c", "\u200b", "\u200d", "\ufeff",
  "\u0645\u0631\u062d\u0628\u0627", "👩‍👩‍👧‍👦", "🏳️‍🌈", "e\u0301", "\r\n", "\t", "..", "../../etc/passwd", "%00", "%",
  "null", "true", "-1", "1e309", "NaN", "[]", "{}", "'; DROP TABLE sessions; --", "<script>alert(1)</script>",
  "${jndi:ldap://x}", "__proto__", "constructor", "💥".repeat(50), "x".repeat(300)
]
const awkwardChar = fc.constantFrom("\u0000", "\ud800", "\udfff", "\u202e", "\u200b", "\ufeff", "😀", "\u0301", "a", "/", "%", "\\", "\"")
const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.string({ unit: awkwardChar, maxLength: 30 }),
  fc.constantFrom(...awkward)
)
const chatIdish = fc.oneof(
  fc.constantFrom("15550001234@c.us", "+15550001234", "15550001234", "120363000000000000@g.us", "123@newsletter", "99@lid"),
  fc.constantFrom("@c.us", "1@c.us", "1".repeat(40) + "@c.us", "15550001234@s.whatsapp.net", "status@broadcast", "+1 555 000", "\u0661\u0662\u0663\u0664\u0665\u0666\u0667@c.us"),
  fc.tuple(hostileString, fc.constantFrom("@c.us", "@g.us", "@newsletter", "@lid", "")).map(([id, at]) => id + at)
)
const urlish = fc.constantFrom("http://127.0.0.1:9/hook", "http://localhost/x", "http://[::1]/", "http://169.254.169.254/latest", "file:///etc/passwd", "ftp://x/", "http://u:p@127.0.0.1:9/", "socks5://127.0.0.1:9", "not a url", "http://")
const scalar = fc.oneof(hostileString, chatIdish, urlish, fc.integer(), fc.double(), fc.boolean(), fc.constant(null))

const fields = [
  "name", "proxy", "url", "autoStart", "phoneNumber", "chatId", "text", "mentions", "quotedMessageId", "media", "caption",
  "filename", "ptt", "messageId", "messageIds", "emoji", "messages", "type", "participants", "subject", "description",
  "code", "inviteCode", "events", "secret", "headers", "enabled", "maxAttempts", "sessionId", "channelId", "groupId",
  "labelId", "color", "id", "role", "allowedSessions", "allowedIps", "rateLimitPerMinute", "expiresAt", "__proto__"
]
/** Objects with the API's own field names, so requests get past "missing field" into the handlers. */
const fieldy: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, fc.array(tie("value"), { maxLength: 4 }), tie("object")),
  object: fc.dictionary(fc.constantFrom(...fields), tie("value"), { maxKeys: 6 })
})).object

const mediaJson = fc.record({
  chatId: chatIdish,
  media: fc.oneof(
    fc.record({ data: fc.oneof(fc.constant(base64(png())), fc.uint8Array({ maxLength: 64 }).map(base64), hostileString), mimetype: fc.option(hostileString), filename: fc.option(hostileString) }),
    fc.record({ url: fc.oneof(urlish, hostileString) }),
    scalar
  ),
  caption: fc.option(hostileString),
  ptt: fc.option(scalar),
  mentions: fc.option(fc.array(chatIdish, { maxLength: 3 }))
}, { requiredKeys: [] })

// ---- bodies ---------------------------------------------------------------------------------

/** What to send, described small (fast-check prints it on failure) and built just before sending. */
type BodySpec =
  | { readonly kind: "none" }
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "deep"; readonly depth: number; readonly open: "[" | "{\"text\":"; readonly field: string | null }
  | { readonly kind: "huge"; readonly bytes: number; readonly char: string; readonly field: string }
  | { readonly kind: "multipart"; readonly boundary: string; readonly parts: ReadonlyArray<Part>; readonly truncated: boolean }
interface Part {
  readonly name: string
  readonly filename: string | null
  readonly type: string | null
  readonly data: string
}

const brokenJson = fc.oneof(
  fc.constantFrom("{", "{\"name\":", "[1,2", "{\"chatId\":\"15550001234@c.us\",}", "{'a':1}", "\"unterminated", "nul", "{\"a\":NaN}", "\ufeff{}", "{}{}", "\u0000"),
  fc.json().map((json) => json.slice(0, Math.max(0, json.length - 1))),
  fc.string({ unit: "binary", maxLength: 200 })
)
const multipart = fc.record({
  kind: fc.constant("multipart" as const),
  boundary: fc.oneof(fc.constant("XyZ"), fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 70 })),
  parts: fc.array(fc.record({
    name: fc.oneof(fc.constantFrom("file", "chatId", "caption", "ptt", "filename", "name"), hostileString),
    filename: fc.option(hostileString),
    type: fc.option(fc.constantFrom("image/png", "application/octet-stream", "text/plain", "x/y", ";;")),
    data: fc.oneof(hostileString, chatIdish, fc.constant(Buffer.from(png()).toString("latin1")))
  }), { maxLength: 20 }),
  truncated: fc.boolean()
})
const body = (route: Endpoint): fc.Arbitrary<BodySpec> =>
  fc.oneof(
    fc.constant({ kind: "none" as const }),
    fc.record({ kind: fc.constant("json" as const), value: route.name.startsWith("send") && route.name !== "sendText" ? mediaJson : fieldy }),
    fc.record({ kind: fc.constant("json" as const), value: fc.oneof(fc.jsonValue(), scalar) }),
    fc.record({ kind: fc.constant("text" as const), text: brokenJson }),
    fc.record({ kind: fc.constant("deep" as const), depth: fc.integer({ min: 500, max: 20_000 }), open: fc.constantFrom("[" as const, "{\"text\":" as const), field: fc.option(fc.constantFrom(...fields)) }),
    fc.record({ kind: fc.constant("huge" as const), bytes: fc.integer({ min: 100_000, max: 3 * BODY_MAX }), char: fc.constantFrom("x", "💥", "\u0000", "é", "\\"), field: fc.constantFrom(...fields) }),
    multipart
  )

const jsonOf = (spec: BodySpec): { readonly bytes: Buffer; readonly type: string } | undefined => {
  switch (spec.kind) {
    case "none":
      return undefined
    case "json":
      return { bytes: Buffer.from(JSON.stringify(spec.value) ?? "null"), type: "application/json" }
    case "text":
      return { bytes: Buffer.from(spec.text), type: "application/json" }
    case "deep": {
      const close = spec.open === "[" ? "]" : "}"
      const nested = spec.open.repeat(spec.depth) + "1" + close.repeat(spec.depth)
      return { bytes: Buffer.from(spec.field === null ? nested : `{"${spec.field}":${nested}}`), type: "application/json" }
    }
    case "huge": {
      const escaped = JSON.stringify(spec.char).slice(1, -1)
      const text = escaped.repeat(Math.ceil(spec.bytes / Buffer.byteLength(escaped)))
      return { bytes: Buffer.from(`{"chatId":"15550001234@c.us","${spec.field}":"${text}"}`), type: "application/json" }
    }
    case "multipart": {
      const part = (p: Part) =>
        `--${spec.boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename === null ? "" : `; filename="${p.filename}"`}\r\n` +
        `${p.type === null ? "" : `Content-Type: ${p.type}\r\n`}\r\n${p.data}\r\n`
      const text = spec.parts.map(part).join("") + (spec.truncated ? `--${spec.boundary}` : `--${spec.boundary}--\r\n`)
      return { bytes: Buffer.from(text), type: `multipart/form-data; boundary=${spec.boundary}` }
    }
  }
}

// ---- requests -------------------------------------------------------------------------------

/** Ids that exist, so some requests reach the handlers' own checks; filled in before the run. */
const known: Record<string, string> = {
  chatId: "15550001234@c.us",
  number: "15550001234",
  groupId: "120363000000000000@g.us",
  channelId: "123@newsletter",
  labelId: "1"
}
const pathParam = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ known: true }) },
  { weight: 3, arbitrary: hostileString.map((value) => ({ encoded: value })) },
  { weight: 1, arbitrary: fc.constantFrom("..", ".", "%00", "%2e%2e", "%2F", "%ZZ", "%", "a%00b", "%ED%A0%80", "%FF", "%C0%AF", "~", "x".repeat(101), "x".repeat(1_000)).map((raw) => ({ raw })) }
)
const query = fc.array(
  fc.tuple(fc.constantFrom("page", "limit", "page", "limit", "chatId", "direction", "status", "since", "until", "token", "x"), fc.oneof(hostileString, fc.integer().map(String), fc.constantFrom("0", "-1", "1.5", "1e3", "99999999999999999999", "", "1,2"))),
  { maxLength: 4 }
)
const auth = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ "x-api-key": TEST_KEY }) },
  { weight: 1, arbitrary: fc.constant({ authorization: `Bearer ${TEST_KEY}` }) },
  { weight: 1, arbitrary: fc.constant({}) },
  { weight: 2, arbitrary: fc.oneof(fc.string({ unit: "grapheme-ascii", maxLength: 300 }), fc.constant("sb_" + "A".repeat(5_000))).chain((junk) =>
    fc.constantFrom({ "x-api-key": junk }, { authorization: `Bearer ${junk}` }, { authorization: junk }, { "x-api-key": junk, authorization: `Bearer ${TEST_KEY}` })
  ) }
)
const headerValue = fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((code) => String.fromCharCode(code === 0x7f ? 0x20 : code)), maxLength: 200 })
const junkHeaders = fc.dictionary(
  fc.constantFrom("x-forwarded-for", "x-request-id", "accept", "accept-encoding", "content-encoding", "last-event-id", "cookie", "x-http-method-override", "range", "if-none-match", "origin"),
  fc.oneof(headerValue, fc.constantFrom("gzip", "bytes=0-1", "1.2.3.4, 999.1.1.1", "::1", "*/*")),
  { maxKeys: 3 }
)
const contentType = fc.oneof(
  { weight: 5, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constantFrom(null, "text/plain", "application/x-www-form-urlencoded", "application/octet-stream", "application/json; charset=utf-16", "APPLICATION/JSON", "multipart/form-data", "multipart/form-data; boundary=", "image/png", ";;", "") }
)

interface Spec {
  readonly route: Endpoint
  readonly method: string
  readonly params: Record<string, { readonly known: true } | { readonly encoded: string } | { readonly raw: string }>
  readonly query: ReadonlyArray<readonly [string, string]>
  readonly headers: Record<string, string>
  /** `undefined`: the body's own type; `null`: none. */
  readonly contentType: string | null | undefined
  readonly body: BodySpec
  readonly chunked: boolean
}

const spec = (route: Endpoint): fc.Arbitrary<Spec> =>
  fc.record({
    route: fc.constant(route),
    method: fc.oneof({ weight: 9, arbitrary: fc.constant(route.method) }, fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")),
    params: fc.record(Object.fromEntries((route.path.match(/:\w+/g) ?? []).map((name) => [name.slice(1), pathParam]))),
    query,
    headers: fc.tuple(auth, junkHeaders).map(([a, b]) => ({ ...b, ...a })),
    contentType,
    body: body(route),
    chunked: fc.boolean()
  })

/** Every byte but the unreserved ones escaped; a lone surrogate goes as its (invalid) UTF-8 bytes. */
const percentEncoded = (value: string) =>
  Array.from(value, (char) => {
    const code = char.codePointAt(0)!
    if (/^[\w.~-]$/.test(char)) return char
    const bytes = code >= 0xd800 && code <= 0xdfff
      ? [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
      : [...Buffer.from(char, "utf8")]
    return bytes.map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("")
  }).join("")

const toRequest = (spec: Spec): RawRequest => {
  const path = spec.route.path.replace(/:(\w+)/g, (_, name: string) => {
    const param = spec.params[name]!
    if ("known" in param) return encodeURIComponent(known[name] ?? "unknown")
    return "raw" in param ? param.raw : percentEncoded(param.encoded)
  })
  const search = new URLSearchParams(spec.query.map(([key, value]): [string, string] => [key, value])).toString()
  // A large body on a GET goes unread, and Node resets the connection under a large answer
  // (/api/metrics): a transport matter, and no client sends one.
  const built = ["GET", "OPTIONS"].includes(spec.method) && spec.body.kind === "huge" ? undefined : jsonOf(spec.body)
  const type = spec.contentType === undefined ? built?.type : spec.contentType
  const headers = { ...spec.headers, ...(type === undefined || type === null ? {} : { "content-type": type }) }
  return { method: spec.method, path: search === "" ? path : `${path}?${search}`, headers, ...(built === undefined ? {} : { body: built.bytes }), chunked: spec.chunked }
}

const describeExchange = (request: RawRequest, answer: RawAnswer) =>
  `${request.method} ${request.path.slice(0, 300)}\n` +
  `headers: ${JSON.stringify(request.headers).slice(0, 500)}\n` +
  `body (${request.body?.length ?? 0} bytes${request.chunked ? ", chunked" : ""}): ${request.body?.subarray(0, 300).toString("utf8") ?? ""}\n` +
  `→ ${answer.status} ${answer.headers["content-type"] ?? ""} ${answer.text.slice(0, 500)}`

/** Sends `request`; the properties of any answer: no 5xx, and every refusal in the error shape with its own status. */
const check = async (baseUrl: string, request: RawRequest) => {
  const answer = await rawRequest(baseUrl, request).catch((error: Error) => {
    throw new Error(`${describeExchange(request, { status: 0, headers: {}, text: "" })}\n${error.message}`)
  })
  const context = describeExchange(request, answer)
  expect(answer.status, context).toBeLessThan(500)
  if (answer.status < 400) return
  expect(answer.headers["content-type"] ?? "", context).toMatch(/^application\/json/)
  const error = JSON.parse(answer.text)
  expect(error, context).toMatchObject({ statusCode: answer.status, error: expect.any(String), code: expect.any(String), message: expect.any(String) })
}

// ---- the run --------------------------------------------------------------------------------

describe("hostile input, on every endpoint", () => {
  let scope: Scope.CloseableScope
  let gateway: TestGateway
  let canary: { readonly id: string; readonly phone: string }
  /** What the gateway logged at Error or worse: a defect in a handler or a fiber it started. */
  const errors: Array<string> = []
  const collectErrors = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ cause, logLevel, message }) => {
      if (LogLevel.greaterThanEqual(logLevel, LogLevel.Error)) errors.push(`${logLevel.label} ${JSON.stringify(message)} ${String(cause)}`)
    })
  )

  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    gateway = await Effect.runPromise(Scope.extend(startGateway({ bodyMaxBytes: BODY_MAX }), scope).pipe(Effect.provide(collectErrors)))
    canary = await readySession(gateway, `canary-${Date.now()}`)
    const target = await readySession(gateway, "target")
    known.sessionId = target.id
    const sent = await gateway.call("POST", `/api/sessions/${target.id}/messages/send-text`, { body: { chatId: known.chatId, text: "hello" } })
    known.messageId = sent.body.messageId
    const bulk = await gateway.call("POST", `/api/sessions/${target.id}/messages/send-bulk`, { body: { messages: [{ type: "text", chatId: known.chatId, text: "hi" }] } })
    known.batchId = bulk.body.batchId
    known.webhookId = "00000000-0000-7000-8000-000000000000"
    known.deliveryId = known.webhookId
  })
  afterAll(async () => {
    if (scope) await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("covers every endpoint once with each kind of garbage", async () => {
    const garbage: ReadonlyArray<BodySpec> = [
      { kind: "text", text: "{\"name\":" },
      { kind: "deep", depth: 10_000, open: "[", field: null },
      { kind: "huge", bytes: BODY_MAX + 1, char: "x", field: "text" },
      { kind: "multipart", boundary: "XyZ", parts: [{ name: "file", filename: "../x.png", type: "image/png", data: "\u0000junk" }], truncated: true }
    ]
    for (const route of endpointsOf(SwitchboardApi)) {
      for (const [index, body] of garbage.entries()) {
        const request = toRequest({
          route,
          method: route.method,
          params: Object.fromEntries((route.path.match(/:\w+/g) ?? []).map((name) => [name.slice(1), { known: true }])),
          query: [["page", "x"], ["limit", "-1"]],
          headers: { "x-api-key": TEST_KEY },
          contentType: undefined,
          body,
          chunked: index % 2 === 0
        })
        await check(gateway.baseUrl, request)
      }
    }
  }, 60_000)

  it("answers anything on any endpoint below 500, in the error shape", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...endpointsOf(SwitchboardApi)).chain(spec), async (spec) => {
        const request = toRequest(spec)
        await check(gateway.baseUrl, request)
      }),
      { numRuns: 300 }
    )
  }, 60_000)

  it("goes on working: healthy, nothing logged as an error, and the session made before still sends", async () => {
    expect((await gateway.call("GET", "/api/health", { key: null })).body).toMatchObject({ status: "ok" })
    expect(errors).toEqual([])
    expect((await gateway.call("GET", `/api/sessions/${canary.id}`)).body).toMatchObject({ id: canary.id, status: "ready" })
    const sent = await gateway.call("POST", `/api/sessions/${canary.id}/messages/send-text`, { body: { chatId: known.chatId, text: "still here" } })
    expect(sent.status, JSON.stringify(sent.body)).toBe(201)
    expect((await gateway.call("GET", `/api/sessions/${canary.id}/messages/${sent.body.messageId}`)).status).toBe(200)
  })
})
