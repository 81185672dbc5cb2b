import { useEffect, useState } from "preact/hooks"
import { authHeaders, getApiBase } from "./api"

/**
 * An image the API names by URL, ready for `<img src>`. One on the API itself needs the key,
 * which an `<img>` cannot send: it is fetched with it and shown from a blob. `version` reads it
 * again when it changed behind the same URL (a new profile picture). Only web and image data
 * URLs are shown: a URL from WhatsApp may name any scheme.
 */
export const useApiImage = (url: string | null, version = 0): string | null => {
  const [src, setSrc] = useState<string | null>(null)
  useEffect(() => {
    const absolute = url?.startsWith("/") ? `${getApiBase()}${url}` : url
    if (absolute === null || absolute === undefined || !/^(https?:\/\/|data:image\/)/i.test(absolute)) {
      setSrc(null)
      return undefined
    }
    if (!absolute.startsWith(`${getApiBase()}/`)) {
      setSrc(absolute)
      return undefined
    }
    let objectUrl: string | undefined
    let current = true
    fetch(absolute, { headers: authHeaders(), mode: "cors", credentials: "omit", cache: "no-store" })
      .then((response) => (response.ok ? response.blob() : null))
      .then((blob) => {
        if (!current || blob === null) return
        objectUrl = URL.createObjectURL(blob)
        setSrc(objectUrl)
      })
      .catch(() => setSrc(null))
    return () => {
      current = false
      if (objectUrl !== undefined) URL.revokeObjectURL(objectUrl)
    }
  }, [url, version])
  return src
}
