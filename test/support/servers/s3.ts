import type { AddressInfo } from "node:net"
import S3rver from "s3rver"
import { log, removeDir, type RunningServer, secondsSince, serverDir } from "./common.js"

/**
 * A throwaway S3: `s3rver` (an npm package) in vitest's own process, on 127.0.0.1 and a port
 * the system picks, its objects in a temporary directory. Path-style addressing, region
 * `us-east-1`, credentials `S3RVER` / `S3RVER` (s3rver checks signatures against those).
 */

export const S3_BUCKET = "switchboard-test"
export const S3_ACCESS_KEY_ID = "S3RVER"
export const S3_SECRET_ACCESS_KEY = "S3RVER"
export const S3_REGION = "us-east-1"

export const startS3 = async (): Promise<RunningServer> => {
  const dir = serverDir("s3")
  const started = performance.now()
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: S3_BUCKET }]
  })
  let address: AddressInfo
  try {
    address = await withTimeout(server.run(), 10_000, "s3rver did not start listening")
  } catch (error) {
    removeDir(dir)
    throw error
  }
  const endpoint = `http://127.0.0.1:${address.port}`
  log(`s3rver on ${endpoint}, bucket ${S3_BUCKET} (start ${secondsSince(started)})`)
  return {
    env: {
      TEST_S3_ENDPOINT: endpoint,
      TEST_S3_BUCKET: S3_BUCKET,
      TEST_S3_REGION: S3_REGION,
      TEST_S3_ACCESS_KEY_ID: S3_ACCESS_KEY_ID,
      TEST_S3_SECRET_ACCESS_KEY: S3_SECRET_ACCESS_KEY
    },
    describe: `s3rver at ${endpoint}`,
    stop: async () => {
      await withTimeout(server.close(), 5_000, "s3rver did not close").catch(() => undefined)
      removeDir(dir)
    },
    stopNow: () => removeDir(dir)
  }
}

const withTimeout = <A>(promise: Promise<A>, ms: number, message: string) =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms)
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error) => {
        clearTimeout(timer)
        reject(error)
      }
    )
  })
