import { randomBytes } from "node:crypto"

// Its own module, apart from the schemas of Ids.ts: it needs node:crypto, and the schemas are
// also read by the dashboard's type check, which has no Node.

// The last millisecond used and the counter within it: ids minted in the same millisecond
// must still sort in the order they were made (lists order by id after time). Per process,
// like the clock it extends.
let lastMillis = 0
let counter = 0

// Random bytes drawn from the system 4 KB at a time: one `randomBytes` call per id (two when
// the millisecond changes) cost ~3% of the CPU of a send, which mints an id per row, event and
// audit record. The bytes are as random; each is handed out once.
const poolSize = 4096
let pool = randomBytes(poolSize)
let poolOffset = 0
/** Random bytes, handed out once each (a view of the pool: copy them before writing to them). */
export const randomFromPool = (length: number): Buffer => {
  if (poolOffset + length > poolSize) {
    pool = randomBytes(poolSize)
    poolOffset = 0
  }
  const taken = pool.subarray(poolOffset, poolOffset + length)
  poolOffset += length
  return taken
}

/**
 * A UUID v7 (RFC 9562): time-ordered, and monotonic within the process: the 12-bit `rand_a`
 * field counts up within a millisecond (§6.2, method 1), so ids sort by creation.
 */
export const uuidv7 = (now: number = Date.now()): string => {
  if (now > lastMillis) {
    lastMillis = now
    counter = randomFromPool(2).readUInt16BE(0) & 0x07ff // start low enough to leave room to count
  } else if (++counter > 0x0fff) {
    lastMillis += 1 // a full millisecond's worth: borrow the next one rather than repeat
    counter = 0
  }
  // A copy: the id's own bytes are overwritten below, never the pool's.
  const bytes = Buffer.from(randomFromPool(16))
  bytes.writeUIntBE(lastMillis, 0, 6)
  bytes[6] = 0x70 | (counter >> 8)
  bytes[7] = counter & 0xff
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
