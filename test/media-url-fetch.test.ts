import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import type * as http from "node:http"
import { allowAnyAddress, isPublicAddress } from "../src/runtime/network/addressPolicy.js"
import { fetchMedia } from "../src/runtime/network/fetchMedia.js"
import { AddressNotAllowed, guardedLookup } from "../src/runtime/network/guardedAgent.js"
import {
  accept,
  allowPrivate,
  bytes,
  endless,
  eventually,
  expectNoSecrets,
  files,
  hang,
  redirect,
  refusal,
  send,
  sendChunked,
  serve,
  shown,
  zeros
} from "./support/mediaIntake.js"

/** Media given by URL: the fetch (time, size, redirects) and the SSRF guard. */

describe("fetching a media URL", () => {
  it.scopedLive("200 with Content-Length: the type from the bytes, the name from Content-Disposition", () =>
    Effect.gen(function*() {
      const { base } = yield* serve({
        "/p": send(files.png, { "content-type": "application/octet-stream", "content-disposition": `attachment; filename="holiday.png"` })
      })
      expect(yield* accept("image", { url: `${base}/p` }, allowPrivate)).toEqual({ data: files.png, mimetype: "image/png", filename: "holiday.png" })
    }))

  it.scopedLive("200 chunked: the name from the URL path, Content-Type as a document's declared type", () =>
    Effect.gen(function*() {
      const { base } = yield* serve({ "/files/contacts.csv": sendChunked(files.csv, { "content-type": "text/csv; charset=utf-8" }) })
      const accepted = yield* accept("document", { url: `${base}/files/contacts.csv?download=1` }, allowPrivate)
      expect(accepted).toEqual({ data: files.csv, mimetype: "text/csv", filename: "contacts.csv" })
    }))

  it.scopedLive("a Content-Length above the cap is 413 before the body is read", () =>
    Effect.gen(function*() {
      const { base, seen } = yield* serve({ "/big": endless(zeros(1024), { "content-length": 100_000_000 }) })
      const error = yield* refusal("image", { url: `${base}/big` }, { ...allowPrivate, maxBytes: 4096 })
      expect(error).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE", details: { maxBytes: 4096 } })
      yield* eventually(() => seen.aborted === 1)
    }))

  it.scopedLive("a chunked body past the cap is 413, and the connection is dropped rather than drained", () =>
    Effect.gen(function*() {
      const { base, seen } = yield* serve({ "/endless": endless(zeros(16 * 1024)) })
      const error = yield* refusal("image", { url: `${base}/endless` }, { ...allowPrivate, maxBytes: 64 * 1024 })
      expect(error).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE" })
      yield* eventually(() => seen.aborted === 1)
    }))

  it.scopedLive("a server that does not answer, or trickles, is MEDIA_FETCH_TIMEOUT within the fetch timeout", () =>
    Effect.gen(function*() {
      const { base, seen } = yield* serve({ "/hang": hang, "/trickle": endless(bytes("x")) })
      for (const path of ["/hang", "/trickle"]) {
        const started = Date.now()
        const error = yield* refusal("image", { url: `${base}${path}` }, { ...allowPrivate, fetchTimeout: Duration.millis(300) })
        expect(Date.now() - started).toBeGreaterThanOrEqual(280)
        expect(Date.now() - started).toBeLessThan(1500)
        expect(error).toMatchObject({ status: 400, code: "MEDIA_FETCH_TIMEOUT", details: { timeoutMs: 300 } })
      }
      yield* eventually(() => seen.aborted === 2)
    }))

  it.scopedLive("a 404 is MEDIA_FETCH_FAILED with the status", () =>
    Effect.gen(function*() {
      const { base, port } = yield* serve({})
      const error = yield* refusal("image", { url: `${base}/missing.png` }, allowPrivate)
      expect(error).toMatchObject({ status: 400, code: "MEDIA_FETCH_FAILED", details: { status: 404, host: `127.0.0.1:${port}` } })
    }))

  it.scopedLive("up to five redirects of any kind are followed; a loop is stopped at the sixth", () =>
    Effect.gen(function*() {
      const { base, seen } = yield* serve({
        "/r1": redirect("/r2", 302),
        "/r2": (request, response) => redirect(`http://${request.headers.host}/r3`, 301)(request, response),
        "/r3": redirect("r4", 307),
        "/r4": redirect("/r5", 303),
        "/r5": redirect("/files/photo.png", 308),
        "/files/photo.png": send(files.png),
        "/loop": redirect("/loop")
      })
      expect(yield* accept("image", { url: `${base}/r1` }, allowPrivate)).toEqual({ data: files.png, mimetype: "image/png", filename: "photo.png" })
      const error = yield* refusal("image", { url: `${base}/loop` }, allowPrivate)
      expect(error).toMatchObject({ status: 400, code: "MEDIA_FETCH_FAILED", details: { redirects: 5 } })
      expect(seen.requests.filter(({ path }) => path === "/loop")).toHaveLength(6)
    }))

  it.scopedLive("a redirect to another scheme is refused", () =>
    Effect.gen(function*() {
      const { base } = yield* serve({ "/ftp": redirect("ftp://127.0.0.1/file.png"), "/file": redirect("file:///etc/passwd") })
      for (const path of ["/ftp", "/file"]) {
        const error = yield* refusal("image", { url: `${base}${path}` }, allowPrivate)
        expect(error).toMatchObject({ status: 400, code: "MEDIA_FETCH_FAILED" })
        expect(error.message).not.toContain("passwd")
      }
    }))

  it.scopedLive("userinfo is sent as Basic credentials, to the same origin only; the query reaches the server", () =>
    Effect.gen(function*() {
      const elsewhere = yield* serve({ "/photo.png": send(files.png) })
      const origin = yield* serve({ "/x": redirect("/y"), "/y": redirect(`${elsewhere.base}/photo.png`) })
      const accepted = yield* accept("image", { url: `http://user:secret@127.0.0.1:${origin.port}/x?token=abc` }, allowPrivate)
      expect(accepted.mimetype).toBe("image/png")
      const basic = `Basic ${Buffer.from("user:secret").toString("base64")}`
      expect(origin.seen.requests.map(({ path, query, headers }) => [path, query, headers.authorization])).toEqual([
        ["/x", "?token=abc", basic],
        ["/y", "", basic]
      ])
      expect(elsewhere.seen.requests[0]?.headers.authorization).toBeUndefined()
    }))

  it.scopedLive("a failed connection is MEDIA_FETCH_FAILED, repeating neither userinfo nor query", () =>
    Effect.gen(function*() {
      const closed = yield* serve({}).pipe(Effect.scoped) // its port is free again once it is closed
      const refused = yield* refusal("image", { url: `http://user:secret@127.0.0.1:${closed.port}/x?token=abc` }, allowPrivate)
      expect(refused).toMatchObject({ status: 400, code: "MEDIA_FETCH_FAILED", details: { reason: "ECONNREFUSED" } })
      expectNoSecrets(refused)
      // Port 1 is on fetch's list of bad ports: undici refuses it without a connection, or an error code.
      const badPort = yield* refusal("image", { url: "http://user:secret@127.0.0.1:1/x?token=abc" }, allowPrivate)
      expect(badPort).toMatchObject({ status: 400, code: "MEDIA_FETCH_FAILED", details: { host: "127.0.0.1:1" } })
      expectNoSecrets(badPort)
    }))
})

describe("the SSRF guard (MEDIA_ALLOW_PRIVATE=false)", () => {
  it.scopedLive("loopback, private, link-local, unspecified and mapped addresses are refused before any connection", () =>
    Effect.gen(function*() {
      const { port, seen } = yield* serve({ "/": send(files.png) })
      const urls = [
        `http://127.0.0.1:${port}/`,
        `http://localhost:${port}/`,
        `http://[::1]:${port}/`,
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        `http://0.0.0.0:${port}/`,
        `http://[::ffff:127.0.0.1]:${port}/`,
        `http://2130706433:${port}/`,
        `http://0x7f.1:${port}/`,
        `http://[::]:${port}/`,
        "http://100.64.0.1/",
        "http://172.16.0.1/",
        "http://192.168.1.1/",
        "http://[fe80::1]/",
        "http://[fd00::1]/",
        "http://224.0.0.1/",
        "http://255.255.255.255/"
      ]
      for (const url of urls) {
        const error = yield* refusal("image", { url })
        expect(error, url).toMatchObject({ status: 400, code: "MEDIA_URL_NOT_ALLOWED", details: { host: new URL(url).host } })
      }
      yield* Effect.sleep("50 millis")
      expect(seen.connections).toBe(0)
    }))

  it.effect("only http and https: ftp:, file: and what is no URL at all are 400", () =>
    Effect.gen(function*() {
      for (const url of ["ftp://example.com/a.png", "file:///etc/passwd", "javascript:alert(1)", "not a url", ""]) {
        const error = yield* refusal("image", { url })
        expect(error, url).toMatchObject({ status: 400, code: "VALIDATION_FAILED" })
        expect(error.message).not.toContain("passwd")
      }
    }))

  it.effect("credentials and tokens in a refused URL are never repeated", () =>
    Effect.gen(function*() {
      const error = yield* refusal("image", { url: "http://user:secret@127.0.0.1:1/x?token=abc" })
      expect(error).toMatchObject({ status: 400, code: "MEDIA_URL_NOT_ALLOWED", details: { host: "127.0.0.1:1" } })
      expectNoSecrets(error)
    }))

  it.scopedLive("every redirect hop is checked again: an IP literal here, a host name's addresses in the lookup", () =>
    Effect.gen(function*() {
      let trustLoopback = true
      const portOf = (request: http.IncomingMessage) => new URL(`http://${request.headers.host}`).port
      const { base, port, seen } = yield* serve({
        "/to-literal": (request, response) => redirect(`http://127.0.0.2:${portOf(request)}/secret.png`)(request, response),
        "/to-name": (request, response) => {
          trustLoopback = false
          redirect(`http://localhost:${portOf(request)}/secret.png`)(request, response)
        },
        "/secret.png": send(files.png)
      })
      const options = { maxBytes: 1 << 20, timeout: Duration.seconds(5), maxRedirects: 5 }
      const onlyFirstHop = yield* Effect.flip(fetchMedia(`${base}/to-literal`, { ...options, isAllowed: (address) => address === "127.0.0.1" }))
      expect(shown(onlyFirstHop)).toMatchObject({ status: 400, code: "MEDIA_URL_NOT_ALLOWED", details: { host: `127.0.0.2:${port}` } })
      const untrusted = yield* Effect.flip(fetchMedia(`${base}/to-name`, { ...options, isAllowed: () => trustLoopback }))
      expect(shown(untrusted)).toMatchObject({ status: 400, code: "MEDIA_URL_NOT_ALLOWED", details: { host: `localhost:${port}` } })
      expect(seen.requests.map(({ path }) => path)).toEqual(["/to-literal", "/to-name"])
    }))

  it.scopedLive("with truncate (a link preview's page), a body past the cap is cut there, and the connection dropped", () =>
    Effect.gen(function*() {
      const { base, seen } = yield* serve({ "/endless": endless(zeros(16 * 1024), { "content-type": "text/html", "content-length": 100_000_000 }) })
      const page = yield* fetchMedia(`${base}/endless`, { maxBytes: 40_000, timeout: Duration.seconds(5), maxRedirects: 0, isAllowed: allowAnyAddress, truncate: true })
      expect(page.data.byteLength).toBe(40_000)
      expect(page.data.subarray(0, files.png.byteLength)).toEqual(files.png)
      expect(page.url.href).toBe(`${base}/endless`)
      yield* eventually(() => seen.aborted === 1)
    }))

  it.effect("the lookup refuses a name when any of its addresses is refused, and passes on the rest", () =>
    Effect.gen(function*() {
      const lookup = (isAllowed: (address: string) => boolean, all: boolean) =>
        Effect.async<unknown, unknown>((resume) =>
          guardedLookup(isAllowed)("localhost", { all }, (error, address) => resume(error ? Effect.fail(error) : Effect.succeed(address)))
        )
      expect(yield* Effect.flip(lookup(isPublicAddress, true))).toBeInstanceOf(AddressNotAllowed)
      expect(yield* lookup(allowAnyAddress, true)).toEqual(expect.arrayContaining([expect.objectContaining({ address: expect.any(String) })]))
      expect(["127.0.0.1", "::1"]).toContain(yield* lookup(allowAnyAddress, false))
    }))
})

describe("the address policy", () => {
  it("lets public addresses of both families through, also in the IPv6 forms that embed IPv4", () => {
    const publicAddresses = [
      "8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0",
      "192.167.255.255", "169.253.255.255", "223.255.255.255", "2606:4700:4700::1111", "2001:4860:4860::8888",
      "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8", "::ffff:808:808", "64:ff9b::808:808", "[2606:4700::1]"
    ]
    for (const address of publicAddresses) expect(isPublicAddress(address), address).toBe(true)
  })

  it("stops loopback, private, link-local, CGNAT, unspecified, multicast, broadcast and reserved, in every form", () => {
    const nonPublic = [
      "127.0.0.1", "127.255.255.254", "10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255", "192.168.0.1",
      "169.254.169.254", "100.64.0.1", "100.127.255.255", "0.0.0.0", "0.1.2.3", "224.0.0.1", "239.255.255.250",
      "255.255.255.255", "240.0.0.1", "192.0.2.1", "198.51.100.1", "203.0.113.1", "198.18.0.1", "192.0.0.1",
      "::1", "::", "fe80::1", "fe80::1%eth0", "febf::1", "fc00::1", "fd12:3456::1", "ff02::1", "fec0::1",
      "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:0.0.0.0", "::127.0.0.1",
      "64:ff9b::127.0.0.1", "64:ff9b::a00:1", "64:ff9b:1::1", "2001:db8::1", "2001::1", "2002:7f00:1::1", "100::1",
      "3fff::1", "[::1]"
    ]
    for (const address of nonPublic) expect(isPublicAddress(address), address).toBe(false)
  })

  it("does not take what is no IP address for a public one", () => {
    for (const notAnAddress of ["localhost", "", "example.com", "1.2.3", "999.1.1.1"]) expect(isPublicAddress(notAnAddress)).toBe(false)
  })
})
