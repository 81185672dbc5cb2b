const decodeExtended = (value: string): string | undefined => {
  // RFC 8187: charset'language'percent-encoded; UTF-8 is what everyone sends.
  const match = /^[\w!#$%&+^`{}~-]*'[^']*'(.*)$/.exec(value.trim())
  if (match === null) return undefined
  try {
    return decodeURIComponent(match[1]!)
  } catch {
    return undefined
  }
}

/** The file name of a `Content-Disposition` header: `filename*` (RFC 6266) before `filename`. */
export const filenameFromContentDisposition = (header: string | null): string | undefined => {
  if (header === null) return undefined
  const extended = /(?:^|;)\s*filename\*\s*=\s*([^;]+)/i.exec(header)
  const fromExtended = extended === null ? undefined : decodeExtended(extended[1]!)
  if (fromExtended !== undefined) return fromExtended
  const quoted = /(?:^|;)\s*filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header)
  if (quoted !== null) return quoted[1]!.replace(/\\(.)/g, "$1")
  return /(?:^|;)\s*filename\s*=\s*([^";\s]+)/i.exec(header)?.[1]
}
