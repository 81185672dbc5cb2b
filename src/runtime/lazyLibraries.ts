/**
 * Libraries loaded when first used rather than at start-up: image processing, file sniffing,
 * HTML parsing and QR drawing serve requests that come later or never, and loading them all
 * took ~400 ms of a gateway's start on the 2-core machine of issue 19 (each `import()`d after
 * the Effect core: link-preview-js 178 ms, file-type 75, sharp 71, qrcode 46). Each loads at
 * its first use and keeps what it loaded; a load that failed is tried again at the next use.
 */
export const loadedWhenFirstUsed = <A>(load: () => Promise<A>): () => Promise<A> => {
  let loaded: Promise<A> | undefined
  return () =>
    (loaded ??= load().catch((error: unknown) => {
      loaded = undefined
      throw error
    }))
}

export const loadSharp: () => Promise<typeof import("sharp").default> = loadedWhenFirstUsed(() => import("sharp").then((module) => module.default))
export const loadFileType: () => Promise<typeof import("file-type")> = loadedWhenFirstUsed(() => import("file-type"))
export const loadLinkPreview: () => Promise<typeof import("link-preview-js")> = loadedWhenFirstUsed(() => import("link-preview-js"))
export const loadQrCode: () => Promise<typeof import("qrcode")> = loadedWhenFirstUsed(() => import("qrcode").then((module) => module.default))
