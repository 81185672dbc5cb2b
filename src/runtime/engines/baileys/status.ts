import type { MiscMessageGenerationOptions } from "@whiskeysockets/baileys"
import type { SendCommand } from "../../Engine.js"
import { toWireJid } from "./jids.js"

/**
 * Status updates through Baileys: a send to `status@broadcast` encrypted (like a group message,
 * with a sender key) to each contact of `statusJidList`, who alone may see it. A text update's
 * look rides in the send's options (`backgroundColor` → `backgroundArgb`, `font`), which Baileys
 * puts on the `extendedTextMessage`. Revoking one is the ordinary revoke in that chat.
 */
export const statusOptionsOf = ({ content, statusAudience }: SendCommand): Partial<MiscMessageGenerationOptions> => {
  if (statusAudience === undefined) return {}
  const style = content.type === "text" ? content.statusStyle : undefined
  return {
    statusJidList: statusAudience.map(toWireJid),
    broadcast: true,
    ...(style?.backgroundColor == null ? {} : { backgroundColor: style.backgroundColor }),
    ...(style?.font == null ? {} : { font: style.font })
  }
}
