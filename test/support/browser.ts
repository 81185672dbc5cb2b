import * as fs from "node:fs"
import * as path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"

/**
 * Debian's Chromium (installed by the test globalSetup, TEST_CHROMIUM) driven by
 * playwright-core, headless. The flags keep Chromium from reaching for Google's services, which
 * this machine's closed network refuses.
 */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: process.env["TEST_CHROMIUM"] ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })

/** Where the screenshots of a run go: test-results/screenshots (kept by CI as the run's pictures). */
export const screenshotDir = path.resolve("test-results", "screenshots")

export const screenshot = async (page: Page, name: string) => {
  fs.mkdirSync(screenshotDir, { recursive: true })
  const file = path.join(screenshotDir, `${name}.png`)
  await page.screenshot({ path: file, fullPage: true })
  return file
}

/** Only loopback: proves a page works offline (nothing from a CDN or the internet). */
export const offlineOnly = async (page: Page) => {
  const reached: Array<string> = []
  await page.route("**/*", (route) => {
    const url = new URL(route.request().url())
    if (url.protocol === "data:" || url.protocol === "blob:" || url.hostname === "127.0.0.1" || url.hostname === "localhost") {
      return route.continue()
    }
    reached.push(url.toString())
    return route.abort()
  })
  return reached
}

/** The page is no wider than its viewport: nothing makes the whole page scroll sideways. */
export const pageOverflow = (page: Page) =>
  page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth")
