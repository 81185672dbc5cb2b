/**
 * `switchboard/engines/baileys`: the WhatsApp engine (Baileys, the multi-device protocol). Its
 * own entry, because importing it loads Baileys and the protocol's libraries: a program on the
 * sandbox engine never pays for them.
 */
export { BaileysEngineLive, type BaileysEngineOptions } from "../runtime/engines/baileys/BaileysEngine.js"
