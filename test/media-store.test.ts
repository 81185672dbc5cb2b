import { localDiskMediaStore, mediaStoreFromSettings, s3MediaStore } from "../src/layers/media/mediaStoreLayers.js"
import { ListObjectsCommand, S3Client } from "@aws-sdk/client-s3"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Context, Effect, Exit, Layer, Option, Stream } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import * as net from "node:net"
import { defaultSettings } from "../src/app/Config.js"
import { MediaStore, type MediaStoreService } from "../src/runtime/ports/MediaStore.js"
import { parseS3Url, type S3MediaStoreOptions } from "../src/layers/media/S3MediaStore.js"
import { tempDir } from "./support/gateway.js"
import { serverUrl, unavailable } from "./support/servers/availability.js"

/**
 * The MediaStore contract, once on local disk and once on S3 (s3rver, from the globalSetup);
 * then what only S3 has: its URL, prefixes, batched deletes, and failures.
 */

const s3Skip = unavailable("s3", "the S3 half of media-store.test.ts")

/** The test server's bucket, under a prefix of this test's own (the bucket is shared by the run). */
const s3Options = (overrides: Partial<S3MediaStoreOptions> = {}): S3MediaStoreOptions => ({
  bucket: process.env["TEST_S3_BUCKET"]!,
  prefix: `media-store-${randomUUID()}`,
  region: process.env["TEST_S3_REGION"]!,
  endpoint: serverUrl("s3"),
  forcePathStyle: true,
  credentials: { accessKeyId: process.env["TEST_S3_ACCESS_KEY_ID"]!, secretAccessKey: process.env["TEST_S3_SECRET_ACCESS_KEY"]! },
  ...overrides
})

const backends: ReadonlyArray<{ readonly name: string; readonly skip: string | false; readonly layer: () => Layer.Layer<MediaStore> }> = [
  { name: "local disk", skip: false, layer: () => localDiskMediaStore(tempDir("media-store-")) },
  { name: "S3", skip: s3Skip ?? false, layer: () => s3MediaStore(s3Options()) }
]

const buildStore = (layer: Layer.Layer<MediaStore>) => Effect.map(Layer.build(layer), Context.get(MediaStore))

const bytes = (text: string) => new TextEncoder().encode(text)

/** The object's size and every byte its stream gives, with how many chunks they came in. */
const streamed = (store: MediaStoreService, key: string) =>
  Effect.gen(function*() {
    const found = yield* store.stream(key)
    if (Option.isNone(found)) return Option.none()
    const chunks = Chunk.toReadonlyArray(yield* Stream.runCollect(found.value.stream))
    const data = new Uint8Array(chunks.reduce((n, chunk) => n + chunk.byteLength, 0))
    chunks.reduce((offset, chunk) => (data.set(chunk, offset), offset + chunk.byteLength), 0)
    return Option.some({ size: found.value.size, data, chunks: chunks.length })
  })

for (const backend of backends) {
  describe.skipIf(backend.skip)(`MediaStore on ${backend.name}`, () => {
    it.scopedLive("puts and reads objects whole; a missing key is None, not an error", () =>
      Effect.gen(function*() {
        const store = yield* buildStore(backend.layer())
        yield* store.put("s1/m1", bytes("first"))
        expect(yield* store.read("s1/m1")).toEqual(Option.some(bytes("first")))
        yield* store.put("s1/m1", bytes("replaced, and longer"))
        expect(yield* store.read("s1/m1")).toEqual(Option.some(bytes("replaced, and longer")))
        yield* store.put("s1/empty", new Uint8Array(0))
        expect(yield* store.read("s1/empty")).toEqual(Option.some(new Uint8Array(0)))
        expect(yield* store.read("s1/missing")).toEqual(Option.none())
        expect(yield* store.read("nobody/missing")).toEqual(Option.none())
      }))

    it.scopedLive("streams an object with its size, as often as the stream is run; a missing key is None", () =>
      Effect.gen(function*() {
        const store = yield* buildStore(backend.layer())
        yield* store.put("s1/m2", bytes("streamed bytes"))
        const found = yield* streamed(store, "s1/m2")
        expect(Option.map(found, ({ data, size }) => ({ size, data }))).toEqual(Option.some({ size: 14, data: bytes("streamed bytes") }))
        const object = Option.getOrThrow(yield* store.stream("s1/m2"))
        const twice = yield* Effect.all([Stream.runCollect(object.stream), Stream.runCollect(object.stream)])
        expect(twice.map((chunks) => Buffer.concat(Chunk.toReadonlyArray(chunks)).toString())).toEqual(["streamed bytes", "streamed bytes"])
        expect(yield* store.stream("s1/missing")).toEqual(Option.none())
        // a stream that is never run is no leak and no error
        yield* store.stream("s1/m2")
      }))

    it.scopedLive("streams a big object in chunks, bytes intact", () =>
      Effect.gen(function*() {
        const store = yield* buildStore(backend.layer())
        const big = new Uint8Array(randomBytes(12 * 1024 * 1024 + 7))
        yield* store.put("s1/big", big)
        const found = Option.getOrThrow(yield* streamed(store, "s1/big"))
        expect(found.size).toBe(big.byteLength)
        expect(found.chunks).toBeGreaterThan(1)
        expect(Buffer.compare(found.data, big)).toBe(0)
        // taking only the start stops the read there
        const object = Option.getOrThrow(yield* store.stream("s1/big"))
        const head = yield* Stream.runCollect(object.stream.pipe(Stream.take(1)))
        expect(Chunk.size(head)).toBe(1)
      }))

    it.scopedLive("removes one object (idempotently) and everything under a prefix, and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* buildStore(backend.layer())
        const keys = ["s1/a", "s1/b", "s1/nested/c", "s10/a", "s2/a"]
        yield* Effect.forEach(keys, (key) => store.put(key, bytes(key)), { discard: true })
        yield* store.remove("s1/a")
        yield* store.remove("s1/a")
        expect(yield* store.read("s1/a")).toEqual(Option.none())
        expect(yield* store.stream("s1/a")).toEqual(Option.none())
        yield* store.removeAll("s1")
        const left = yield* Effect.forEach(keys, (key) => Effect.map(store.read(key), Option.isSome))
        expect(Object.fromEntries(keys.map((key, i) => [key, left[i]]))).toEqual({
          "s1/a": false,
          "s1/b": false,
          "s1/nested/c": false,
          "s10/a": true,
          "s2/a": true
        })
        yield* store.removeAll("s1")
        yield* store.removeAll("never-had-any")
      }))

    it.scopedLive("refuses keys that are not plain relative paths, with a MediaStoreError", () =>
      Effect.gen(function*() {
        const store = yield* buildStore(backend.layer())
        for (const key of ["../escape", "s1/../../escape"]) {
          const error = yield* Effect.flip(store.put(key, bytes("x")))
          expect(error._tag).toBe("MediaStoreError")
          expect(error.operation).toBe("put")
        }
        expect((yield* Effect.flip(store.read("../escape")))._tag).toBe("MediaStoreError")
        expect((yield* Effect.flip(store.stream("../escape")))._tag).toBe("MediaStoreError")
      }))
  })
}

describe("S3 URLs (MEDIA_URL=s3://…)", () => {
  it("parses bucket, prefix and options", () => {
    expect(parseS3Url("s3://media-bucket")).toEqual({
      bucket: "media-bucket",
      prefix: "",
      region: undefined,
      endpoint: undefined,
      forcePathStyle: undefined
    })
    expect(parseS3Url("s3://media-bucket/switchboard/prod/?region=eu-central-1&endpoint=http://127.0.0.1:9000&forcePathStyle=true")).toEqual({
      bucket: "media-bucket",
      prefix: "switchboard/prod",
      region: "eu-central-1",
      endpoint: "http://127.0.0.1:9000",
      forcePathStyle: true
    })
    expect(parseS3Url("s3://b?forcePathStyle=false")).toMatchObject({ forcePathStyle: false })
  })

  it("refuses what it cannot use, without repeating credentials", () => {
    const withCredentials = parseS3Url("s3://AKIAEXAMPLE:very-secret@bucket")
    expect(withCredentials).toMatch(/credentials do not go in MEDIA_URL/)
    expect(withCredentials).not.toContain("very-secret")
    expect(parseS3Url("s3://bucket?regoin=x")).toMatch(/unknown option regoin/)
    expect(parseS3Url("s3://bucket?forcePathStyle=yes")).toMatch(/forcePathStyle/)
    expect(parseS3Url("s3://bucket?endpoint=localhost:9000")).toMatch(/endpoint/)
    expect(parseS3Url("s3://")).toMatch(/no bucket/)
  })

  it.scopedLive("MediaStore.fromSettings dies on an unusable MEDIA_URL, naming the problem but not the secret", () =>
    Effect.gen(function*() {
      const settings = yield* defaultSettings({ dataDir: tempDir() })
      const layer = (url: string) => mediaStoreFromSettings({ ...settings, media: { ...settings.media, url: Option.some(url) } })
      const secret = yield* Effect.exit(buildStore(layer("s3://key:very-secret@bucket")))
      expect(Exit.isFailure(secret) && Cause.isDie(secret.cause)).toBe(true)
      const message = Exit.isFailure(secret) ? Cause.pretty(secret.cause) : ""
      expect(message).toContain("credentials do not go in MEDIA_URL")
      expect(message).not.toContain("very-secret")
      const unknown = yield* Effect.exit(buildStore(layer("ftp://host/media")))
      expect(Exit.isFailure(unknown) && Cause.pretty(unknown.cause)).toContain("use file:<dir> or s3://")
    }))
})

describe.skipIf(s3Skip ?? false)("MediaStore on S3: its own", () => {
  const rawClient = () =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const { credentials, endpoint, region } = s3Options()
        return new S3Client({ region: region!, endpoint: endpoint!, forcePathStyle: true, credentials: credentials! })
      }),
      (client) => Effect.sync(() => client.destroy())
    )
  const keysUnder = (client: S3Client, prefix: string) =>
    Effect.promise(() => client.send(new ListObjectsCommand({ Bucket: process.env["TEST_S3_BUCKET"]!, Prefix: prefix }))).pipe(
      Effect.map((page) => (page.Contents ?? []).map((object) => object.Key).sort())
    )

  it.scopedLive("MediaStore.fromSettings picks S3 by the URL's scheme; credentials from the AWS environment variables; objects under the URL's prefix", () =>
    Effect.gen(function*() {
      const prefix = `from-url-${randomUUID()}`
      const url = `s3://${process.env["TEST_S3_BUCKET"]}/${prefix}/media?region=${process.env["TEST_S3_REGION"]}&endpoint=${encodeURIComponent(serverUrl("s3"))}&forcePathStyle=true`
      const environment = { AWS_ACCESS_KEY_ID: process.env["TEST_S3_ACCESS_KEY_ID"], AWS_SECRET_ACCESS_KEY: process.env["TEST_S3_SECRET_ACCESS_KEY"] }
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          const before = { AWS_ACCESS_KEY_ID: process.env["AWS_ACCESS_KEY_ID"], AWS_SECRET_ACCESS_KEY: process.env["AWS_SECRET_ACCESS_KEY"] }
          Object.assign(process.env, environment)
          return before
        }),
        (before) => Effect.sync(() => Object.entries(before).forEach(([name, value]) => value === undefined ? delete process.env[name] : (process.env[name] = value)))
      )
      const settings = yield* defaultSettings({ dataDir: tempDir() })
      const store = yield* buildStore(mediaStoreFromSettings({ ...settings, media: { ...settings.media, url: Option.some(url) } }))
      yield* store.put("s1/m1", bytes("via MEDIA_URL"))
      expect(yield* store.read("s1/m1")).toEqual(Option.some(bytes("via MEDIA_URL")))
      const client = yield* rawClient()
      expect(yield* keysUnder(client, `${prefix}/`)).toEqual([`${prefix}/media/s1/m1`])
    }))

  it.scopedLive("removeAll deletes more objects than one page and one batch (1000) hold", () =>
    Effect.gen(function*() {
      const options = s3Options()
      const store = yield* buildStore(s3MediaStore(options))
      const keys = Array.from({ length: 1_010 }, (_, i) => `many/${String(i).padStart(4, "0")}`)
      yield* Effect.forEach(keys, (key) => store.put(key, bytes(key)), { discard: true, concurrency: 32 })
      yield* store.put("kept/one", bytes("kept"))
      const client = yield* rawClient()
      yield* store.removeAll("many")
      expect(yield* keysUnder(client, `${options.prefix}/many/`)).toEqual([])
      expect(yield* keysUnder(client, `${options.prefix}/`)).toEqual([`${options.prefix}/kept/one`])
    }), 60_000)

  it.scopedLive("an S3 that cannot be reached, or refuses the credentials: MediaStoreError, no crash", () =>
    Effect.gen(function*() {
      const closedPort = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const probe = net.createServer().listen(0, "127.0.0.1", () => {
            const { port } = probe.address() as net.AddressInfo
            probe.close(() => resolve(port))
          })
        }))
      const unreachable = yield* buildStore(s3MediaStore(s3Options({ endpoint: `http://127.0.0.1:${closedPort}` })))
      for (const operation of [unreachable.put("s1/m", bytes("x")), unreachable.read("s1/m"), unreachable.stream("s1/m"), unreachable.remove("s1/m"), unreachable.removeAll("s1")]) {
        const error = yield* Effect.flip(operation as Effect.Effect<unknown, { readonly _tag: string }>)
        expect(error._tag).toBe("MediaStoreError")
      }
      // (s3rver checks the key id, not the signature)
      const refused = yield* buildStore(s3MediaStore(s3Options({ credentials: { accessKeyId: "NOT-S3RVER", secretAccessKey: "wrong-secret" } })))
      const error = yield* Effect.flip(refused.put("s1/m", bytes("x")))
      expect(error).toMatchObject({ _tag: "MediaStoreError", operation: "put", key: "s1/m" })
      expect(error.message).not.toContain("wrong-secret")
      // a stream whose object goes away before it is run fails as a stream, with the store's error
      const store = yield* buildStore(s3MediaStore(s3Options()))
      yield* store.put("s1/gone", bytes("soon gone"))
      const object = Option.getOrThrow(yield* store.stream("s1/gone"))
      yield* store.remove("s1/gone")
      expect((yield* Effect.flip(Stream.runDrain(object.stream)))._tag).toBe("MediaStoreError")
    }))
})
