import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  S3ServiceException
} from "@aws-sdk/client-s3"
import { NodeStream } from "@effect/platform-node"
import { Duration, Effect, Option, Stream } from "effect"
import type { Readable } from "node:stream"
import { MediaStoreError, type MediaStoreService } from "../../runtime/ports/MediaStore.js"

export interface S3MediaStoreOptions {
  readonly bucket: string
  /** Objects are kept under `<prefix>/`; at the bucket's root when empty. */
  readonly prefix?: string | undefined
  /** Else the SDK's: `AWS_REGION`, the profile's… */
  readonly region?: string | undefined
  /** An S3-compatible service (MinIO, R2, s3rver…) instead of AWS. */
  readonly endpoint?: string | undefined
  /** `bucket` in the path rather than the host name: what most S3-compatible services want. */
  readonly forcePathStyle?: boolean | undefined
  /** For tests and embedding; else the SDK's default chain (`AWS_ACCESS_KEY_ID`…, profiles, roles). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string } | undefined
  /** How long one request may take (streams excepted: they take as long as their reader); default 2 min. */
  readonly timeout?: Duration.DurationInput | undefined
}

const QUERY_OPTIONS = ["region", "endpoint", "forcePathStyle"]

/**
 * `s3://bucket[/prefix]?region=…&endpoint=…&forcePathStyle=true` as options, or why it is not
 * usable. Credentials have no place in it (they would end up in logs and process lists).
 */
export const parseS3Url = (url: string): S3MediaStoreOptions | string => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "not a URL: use s3://bucket[/prefix]?region=…"
  }
  if (parsed.protocol !== "s3:") return "not an s3:// URL"
  if (parsed.username !== "" || parsed.password !== "") {
    return "credentials do not go in MEDIA_URL: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or use a profile or role)"
  }
  const bucket = parsed.hostname
  if (bucket === "") return "no bucket: use s3://bucket[/prefix]?region=…"
  const unknown = [...parsed.searchParams.keys()].filter((name) => !QUERY_OPTIONS.includes(name))
  if (unknown.length > 0) return `unknown option ${unknown.join(", ")} in s3://${bucket} (known: ${QUERY_OPTIONS.join(", ")})`
  const forcePathStyle = parsed.searchParams.get("forcePathStyle")
  if (forcePathStyle !== null && !["true", "false", "1", "0"].includes(forcePathStyle)) return "forcePathStyle must be true or false"
  const endpoint = parsed.searchParams.get("endpoint")
  if (endpoint !== null && !/^https?:\/\/./.test(endpoint)) return "endpoint must be an http:// or https:// URL"
  return {
    bucket,
    prefix: decodeURIComponent(parsed.pathname).replace(/^\/+|\/+$/g, ""),
    region: parsed.searchParams.get("region") ?? undefined,
    endpoint: endpoint ?? undefined,
    forcePathStyle: forcePathStyle === null ? undefined : forcePathStyle === "true" || forcePathStyle === "1"
  }
}

/** Up to 1000 keys per DeleteObjects request, as S3 allows. */
const DELETE_BATCH = 1_000

/** A key S3 has no object for. (A HEAD's 404 has no body: it cannot tell a missing bucket apart.) */
const isMissing = (error: unknown, head = false) =>
  error instanceof S3ServiceException &&
  (error.name === "NoSuchKey" || (head && (error.name === "NotFound" || error.$metadata.httpStatusCode === 404)))

/**
 * Media as objects in an S3 bucket (AWS, or a service that speaks its API). A PUT is atomic in
 * S3: a reader sees the old object or the new one, never half of it. Requests are aborted when
 * the caller is interrupted or the timeout passes; the SDK retries what is worth retrying.
 */
export const makeS3MediaStore = (options: S3MediaStoreOptions) =>
  Effect.gen(function*() {
    const { bucket } = options
    const prefix = options.prefix ? `${options.prefix}/` : ""
    const timeout = Duration.decode(options.timeout ?? "2 minutes")
    const config: S3ClientConfig = {
      // checksums only where S3 requires them: what S3-compatible services understand
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      requestHandler: { connectionTimeout: 5_000 },
      ...(options.region === undefined ? {} : { region: options.region }),
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      ...(options.forcePathStyle === undefined ? {} : { forcePathStyle: options.forcePathStyle }),
      ...(options.credentials === undefined ? {} : { credentials: { ...options.credentials } })
    }
    const client = yield* Effect.acquireRelease(Effect.sync(() => new S3Client(config)), (client) => Effect.sync(() => client.destroy()))

    /** The object's key in the bucket; keys that are not plain relative paths are refused, as on disk. */
    const objectKey = (key: string) => {
      const segments = key.split("/")
      if (key === "" || segments.some((segment) => segment === "" || segment === "." || segment === "..")) {
        throw new Error(`media key ${key} is not a relative path`)
      }
      return prefix + key
    }

    const attempt = <A>(operation: string, key: string, run: (signal: AbortSignal) => Promise<A>) =>
      Effect.tryPromise({ try: run, catch: (cause) => new MediaStoreError({ operation, key, cause }) }).pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () => new MediaStoreError({ operation, key, cause: new Error(`no answer from S3 within ${Duration.format(timeout)}`) })
        })
      )

    /** The object's bytes as they arrive; the response is let go of when the stream ends or is interrupted. */
    const bodyOf = (key: string) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        // (not an acquireRelease: the request must stay interruptible, by the timeout too)
        const response = yield* attempt("stream", key, (abortSignal) =>
          client.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey(key) }), { abortSignal }))
        const body = response.Body as Readable
        yield* Effect.addFinalizer(() => Effect.sync(() => body.destroy()))
        return NodeStream.fromReadable<MediaStoreError, Uint8Array>(
          () => body,
          (cause) => new MediaStoreError({ operation: "stream", key, cause })
        )
      }))

    const store: MediaStoreService = {
      put: (key, data) =>
        attempt("put", key, (abortSignal) =>
          client.send(
            new PutObjectCommand({ Bucket: bucket, Key: objectKey(key), Body: data, ContentLength: data.byteLength }),
            { abortSignal }
          )).pipe(Effect.asVoid),
      read: (key) =>
        attempt("read", key, async (abortSignal) => {
          try {
            const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey(key) }), { abortSignal })
            return Option.some(await response.Body!.transformToByteArray())
          } catch (error) {
            if (isMissing(error)) return Option.none()
            throw error
          }
        }),
      stream: (key) =>
        attempt("stream", key, async (abortSignal) => {
          try {
            const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(key) }), { abortSignal })
            return Option.some({ size: head.ContentLength ?? 0, stream: bodyOf(key) })
          } catch (error) {
            if (isMissing(error, true)) return Option.none()
            throw error
          }
        }),
      remove: (key) =>
        attempt("remove", key, (abortSignal) =>
          client.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(key) }), { abortSignal })).pipe(Effect.asVoid),
      removeAll: (under) =>
        attempt("removeAll", under, async (abortSignal) => {
          const listed = `${objectKey(under)}/`
          // ListObjects (v1) pages on by the last key (`Marker`), which every S3-compatible
          // service understands; v2's opaque continuation tokens are not as widely done right
          let marker: string | undefined
          do {
            const page = await client.send(
              new ListObjectsCommand({ Bucket: bucket, Prefix: listed, MaxKeys: DELETE_BATCH, ...(marker === undefined ? {} : { Marker: marker }) }),
              { abortSignal }
            )
            const keys = (page.Contents ?? []).flatMap((object) => (object.Key === undefined ? [] : [{ Key: object.Key }]))
            if (keys.length > 0) {
              const deleted = await client.send(
                new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }),
                { abortSignal }
              )
              const failed = deleted.Errors ?? []
              if (failed.length > 0) {
                throw new Error(`${failed.length} objects not deleted, e.g. ${failed[0]!.Key}: ${failed[0]!.Code} ${failed[0]!.Message ?? ""}`)
              }
            }
            marker = page.IsTruncated ? page.NextMarker ?? keys.at(-1)?.Key : undefined
          } while (marker !== undefined)
        })
    }
    return store
  })
