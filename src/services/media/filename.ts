/** The longest name kept, in characters (most file systems allow 255). */
export const maxFilenameLength = 255

// C0/C1 controls, and the invisible direction marks that make `invoice‮fdp.exe` read as `…exe.pdf`.
const unprintable = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/** Keeps the extension (up to 16 characters) when a long name is cut short. */
const shorten = (name: string): string => {
  const characters = Array.from(name)
  if (characters.length <= maxFilenameLength) return name
  const dot = name.lastIndexOf(".")
  const extension = dot > 0 && name.length - dot <= 16 ? Array.from(name.slice(dot)) : []
  return [...characters.slice(0, maxFilenameLength - extension.length), ...extension].join("")
}

/**
 * A caller's file name made safe to pass on: only its last path component, without control
 * characters, at most 255 characters; `null` when nothing usable is left.
 */
export const cleanFilename = (name: string | undefined): string | null => {
  if (name === undefined) return null
  const lastComponent = name.split(/[/\\]/).at(-1) ?? ""
  const cleaned = lastComponent.replace(unprintable, "").trim()
  return cleaned === "" || cleaned === "." || cleaned === ".." ? null : shorten(cleaned)
}
