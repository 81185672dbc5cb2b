/** The part of s3rver's API the test servers use (the package ships no types). */
declare module "s3rver" {
  import type { AddressInfo } from "node:net"

  interface S3rverOptions {
    readonly address?: string
    readonly port?: number
    readonly silent?: boolean
    readonly directory?: string
    readonly resetOnClose?: boolean
    readonly allowMismatchedSignatures?: boolean
    readonly vhostBuckets?: boolean
    readonly configureBuckets?: ReadonlyArray<{ readonly name: string; readonly configs?: ReadonlyArray<string | Buffer> }>
  }

  class S3rver {
    constructor(options?: S3rverOptions)
    run(): Promise<AddressInfo>
    close(): Promise<void>
    reset(): void
  }

  export default S3rver
}
