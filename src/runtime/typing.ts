import type { MessageRow } from "./ports/store/MessageRepo.js"

/**
 * `typingMs: "auto"`: about the time a person takes to type the text, 50 ms a character,
 * at least 1 s and at most 8 s (a media message counts its caption; none: 1 s).
 */
export const autoTypingMs = (text: string): number => Math.min(8_000, Math.max(1_000, 50 * Array.from(text).length))

/**
 * What the chat shows before a message goes out, and for how long: "recording…" before a
 * voice note, "typing…" before anything else; undefined when the caller asked for none.
 */
export const typingOf = (row: MessageRow): { readonly state: "typing" | "recording"; readonly millis: number } | undefined => {
  const asked = row.sendOptions?.typingMs
  if (asked === undefined || asked === 0) return undefined
  const millis = asked === "auto" ? autoTypingMs(row.text ?? row.caption ?? "") : asked
  return { state: row.type === "audio" && row.media?.ptt === true ? "recording" : "typing", millis }
}
