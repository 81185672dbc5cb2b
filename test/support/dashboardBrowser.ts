import { Duration, Effect, Exit, Scope } from "effect"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll } from "vitest"
import type { Settings } from "../../src/domain/Settings.js"
import { launchChromium, offlineOnly } from "./browser.js"
import { startGateway, type TestGateway } from "./gateway.js"
import { freePort } from "./servers/common.js"

/** A fresh browser context at a width (phone widths get a phone's height), reaching loopback only. */
export const openPage = async (browser: Browser, width: number): Promise<{ context: BrowserContext; page: Page }> => {
  const context = await browser.newContext({ viewport: { width, height: width < 500 ? 844 : 800 } })
  const page = await context.newPage()
  await offlineOnly(page)
  return { context, page }
}

export const signIn = async (page: Page, dashboardUrl: string, key: string) => {
  await page.goto(dashboardUrl)
  await page.getByTestId("api-key").fill(key)
  await page.getByTestId("sign-in").click()
}

/** Follows a nav entry and waits for its page's heading. */
export const goTo = async (page: Page, name: string) => {
  await page.getByTestId(`nav-${name}`).click()
  await page.locator("h1").first().waitFor()
}

/**
 * A gateway on the sandbox engine serving the dashboard on its own port, and Chromium, for one
 * `describe` block: started before its tests, closed after.
 */
export const useDashboard = (overrides: Partial<Settings> = {}) => {
  const scope = Effect.runSync(Scope.make())
  let started: { gateway: TestGateway; dashboardUrl: string; browser: Browser } | undefined
  beforeAll(async () => {
    const dashboardPort = await freePort()
    const gateway = await Effect.runPromise(Scope.extend(startGateway({ dashboardPort, sandboxPairDelay: Duration.millis(50), ...overrides }), scope))
    started = { gateway, dashboardUrl: `http://127.0.0.1:${dashboardPort}/`, browser: await launchChromium() }
  }, 60_000)
  afterAll(async () => {
    await started?.browser.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })
  return () => {
    if (started === undefined) throw new Error("the dashboard's gateway has not started")
    return started
  }
}
