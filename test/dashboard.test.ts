import { Duration, Effect, Exit, Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium, offlineOnly, pageOverflow, screenshot } from "./support/browser.js"
import { goTo, openPage, signIn as signInAt } from "./support/dashboardBrowser.js"
import { eventually, readySession, startGateway, TEST_KEY, type TestGateway } from "./support/gateway.js"
import { freePort } from "./support/servers/common.js"
import { unavailable } from "./support/servers/availability.js"

/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core) against a gateway
 * on the sandbox engine: what an operator does there, at desktop and phone widths, with a
 * screenshot of every page; and Swagger UI, offline, with "Authorize".
 */
describe.skipIf(unavailable("chromium", "the dashboard in a browser") !== undefined)("the dashboard in Chromium", () => {
  const scope = Effect.runSync(Scope.make())
  let gateway: TestGateway
  let dashboardUrl = ""
  let browser: Browser
  let receiver: http.Server
  let receiverUrl = ""
  const received: Array<string> = []

  beforeAll(async () => {
    receiver = http.createServer((request, response) => {
      request.resume()
      request.on("end", () => {
        received.push(String(request.headers["x-webhook-event"]))
        response.end("ok")
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    const dashboardPort = await freePort()
    gateway = await Effect.runPromise(Scope.extend(startGateway({
      dashboardPort,
      sandboxPairDelay: Duration.seconds(2),
      webhooks: { timeout: Duration.seconds(2), allowPrivate: true, concurrency: 4, perWebhookConcurrency: 2, perWebhookConcurrencyMax: 2, eventRetention: Duration.hours(1) }
    }), scope))
    dashboardUrl = `http://127.0.0.1:${dashboardPort}/`
    browser = await launchChromium()
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await new Promise((resolve) => receiver?.close(resolve))
  })

  const open = (width: number) => openPage(browser, width)
  const signIn = (page: Page, key: string) => signInAt(page, dashboardUrl, key)

  it("signs in with a key kept in sessionStorage only, and says why a wrong key is refused", async () => {
    const { context, page } = await open(1280)
    await signIn(page, "sb_not_a_real_key_000000000000000000000000000")
    await expect.poll(() => page.getByTestId("error").textContent()).toContain("UNAUTHORIZED")
    await screenshot(page, "sign-in-1280")
    await signIn(page, TEST_KEY)
    await page.getByTestId("nav-overview").waitFor()
    expect(page.url()).not.toContain(TEST_KEY)
    const storage = await page.evaluate<{ session: string; local: string }>(
      "({ session: JSON.stringify(sessionStorage), local: JSON.stringify(localStorage) })"
    )
    expect(storage.session).toContain(TEST_KEY)
    expect(storage.local).not.toContain(TEST_KEY)
    await context.close()
  })

  it("creates a session, shows its QR, sees it become ready, and sends a message that is delivered", async () => {
    const bob = await readySession(gateway, "bob")
    const { context, page } = await open(1280)
    await signIn(page, TEST_KEY)
    await goTo(page, "sessions")
    await page.getByTestId("session-name").fill("alice")
    await page.getByTestId("session-create").click()
    const row = page.locator(`[data-testid="session-row"][data-session-name="alice"]`)
    await row.waitFor()
    await row.getByTestId("session-start").click()
    await row.getByTestId("session-link").click()
    const qr = page.getByTestId("qr-image")
    await qr.waitFor({ timeout: 10_000 })
    expect(await qr.getAttribute("src")).toMatch(/^data:image\/png;base64,/)
    await screenshot(page, "session-qr-1280")
    // The sandbox "scans" the QR after 2 s; the page hears it through the live event stream.
    await goTo(page, "sessions")
    await expect.poll(() => row.getByTestId("session-status").getAttribute("data-status"), { timeout: 15_000 }).toBe("ready")
    await screenshot(page, "sessions-1280")

    await goTo(page, "tester")
    const sender = page.getByTestId("tester-session")
    await sender.locator("option", { hasText: "alice" }).waitFor({ state: "attached" })
    await sender.selectOption({ label: "alice" })
    await page.getByTestId("tester-chat").fill(bob.phone)
    await page.getByTestId("tester-text").fill("hello from the dashboard")
    await page.getByTestId("tester-send").click()
    await expect.poll(() => page.getByTestId("tester-status").textContent(), { timeout: 15_000 }).toMatch(/delivered|read/)
    await screenshot(page, "tester-1280")
    // The recipient's side stores it as it hears it, a moment after acknowledging it.
    await eventually(
      () => gateway.call("GET", `/api/sessions/${bob.id}/messages?direction=in`),
      (inbox) => inbox.body.data.some((m: { text?: string }) => m.text === "hello from the dashboard")
    )

    await goTo(page, "messages")
    await page.getByTestId("message-row").first().waitFor()
    await screenshot(page, "messages-1280")
    await goTo(page, "overview")
    await screenshot(page, "overview-1280")
    await context.close()
  }, 60_000)

  it("sends a poll and a location from the tester, and shows both as sent and as received", async () => {
    await readySession(gateway, "dora")
    const eve = await readySession(gateway, "eve")
    const { context, page } = await open(1280)
    await signIn(page, TEST_KEY)
    await goTo(page, "tester")
    const sender = page.getByTestId("tester-session")
    await sender.locator("option", { hasText: "dora" }).waitFor({ state: "attached" })
    await sender.selectOption({ label: "dora" })
    await page.getByTestId("tester-chat").fill(eve.phone)

    await page.getByTestId("tester-kind").selectOption("poll")
    await page.getByTestId("tester-poll-name").fill("Lunch where?")
    await page.getByTestId("tester-poll-add").click()
    const options = page.getByTestId("tester-poll-option")
    for (const [index, option] of ["Canteen", "Park", "Desk"].entries()) await options.nth(index).fill(option)
    await page.getByTestId("tester-poll-selectable").selectOption("2")
    await page.getByTestId("tester-send").click()
    await expect.poll(() => page.getByTestId("tester-status").textContent(), { timeout: 15_000 }).toMatch(/delivered|read/)
    const sentPoll = page.getByTestId("tester-result").getByTestId("message-poll")
    await expect.poll(() => sentPoll.getByTestId("message-poll-option").allTextContents(), { timeout: 10_000 }).toEqual(["Canteen 0", "Park 0", "Desk 0"])
    expect(await sentPoll.textContent()).toContain("up to 2 choices")
    await screenshot(page, "tester-poll-1280")

    await page.getByTestId("tester-kind").selectOption("location")
    await page.getByTestId("tester-latitude").fill("52.5163")
    await page.getByTestId("tester-longitude").fill("13.3777")
    await page.getByTestId("tester-location-name").fill("Brandenburg Gate")
    await page.getByTestId("tester-send").click()
    await expect.poll(() => page.getByTestId("tester-status").textContent(), { timeout: 15_000 }).toMatch(/delivered|read/)
    const map = page.getByTestId("tester-result").getByTestId("message-location-map")
    await map.waitFor()
    expect(await map.getAttribute("href")).toContain("mlat=52.5163&mlon=13.3777")

    // eve's side stores both with their content, and the message list shows them so.
    await eventually(
      () => gateway.call("GET", `/api/sessions/${eve.id}/messages?direction=in`),
      (inbox) => ["poll", "location"].every((type) => inbox.body.data.some((m: { type: string }) => m.type === type))
    )
    await goTo(page, "messages")
    await page.getByTestId("messages-session").selectOption({ label: "eve" })
    await page.getByTestId("messages-direction").selectOption("in")
    const rows = page.getByTestId("message-row")
    await expect.poll(() => rows.getByTestId("message-poll").count(), { timeout: 10_000 }).toBe(1)
    expect(await rows.getByTestId("message-poll-option").allTextContents()).toEqual(["Canteen 0", "Park 0", "Desk 0"])
    expect(await rows.getByTestId("message-location").textContent()).toContain("Brandenburg Gate")
    await screenshot(page, "messages-poll-location-1280")
    await context.close()
  }, 60_000)

  it("keeps the tester's contact cards to 1–20 and a poll's options to 2–12, and fits them on a phone", async () => {
    const { context, page } = await open(390)
    await signIn(page, TEST_KEY)
    await goTo(page, "tester")
    await page.getByTestId("tester-kind").selectOption("contact")
    const contacts = page.getByTestId("tester-contact")
    expect(await page.getByTestId("tester-contact-remove").isDisabled()).toBe(true)
    for (let count = 1; count < 20; count++) await page.getByTestId("tester-contact-add").click()
    expect(await contacts.count()).toBe(20)
    expect(await page.getByTestId("tester-contact-add").isDisabled()).toBe(true)
    await page.getByTestId("tester-contact-remove").first().click()
    expect(await contacts.count()).toBe(19)
    expect(await pageOverflow(page), "contact cards").toBeLessThanOrEqual(0)

    await page.getByTestId("tester-kind").selectOption("poll")
    const options = page.getByTestId("tester-poll-option")
    expect(await options.count()).toBe(2)
    expect(await page.getByTestId("tester-poll-remove").first().isDisabled()).toBe(true)
    for (let count = 2; count < 12; count++) await page.getByTestId("tester-poll-add").click()
    expect(await options.count()).toBe(12)
    expect(await page.getByTestId("tester-poll-add").isDisabled()).toBe(true)
    // As many choices as options, and no more once one goes.
    await page.getByTestId("tester-poll-selectable").selectOption("12")
    await page.getByTestId("tester-poll-remove").last().click()
    expect(await page.getByTestId("tester-poll-selectable").inputValue()).toBe("11")
    expect(await pageOverflow(page), "poll").toBeLessThanOrEqual(0)
    await screenshot(page, "tester-poll-390")
    await context.close()
  }, 60_000)

  it("creates a webhook and sends it a test, then creates a key shown once and revokes it", async () => {
    const { context, page } = await open(1280)
    await signIn(page, TEST_KEY)
    await goTo(page, "webhooks")
    await page.getByTestId("webhook-url").fill(receiverUrl)
    await page.getByTestId("webhook-create").click()
    const webhook = page.getByTestId("webhook-row").filter({ hasText: receiverUrl })
    await webhook.waitFor()
    await webhook.getByTestId("webhook-test").click()
    await expect.poll(() => page.getByTestId("webhook-test-result").textContent(), { timeout: 10_000 }).toContain("200")
    await eventually(async () => received, (events) => events.includes("webhook.test"))
    await screenshot(page, "webhooks-1280")

    // The test is kept among the webhook's deliveries, with the receiver's answer.
    await webhook.getByTestId("webhook-show-deliveries").click()
    const deliveries = page.getByTestId("webhook-deliveries")
    const tested = deliveries.locator(`[data-testid="delivery-row"][data-status="delivered"]`).filter({ hasText: "webhook.test" })
    await tested.waitFor()
    expect(await tested.getByTestId("delivery-attempts").textContent()).toBe("1")
    expect(await tested.textContent()).toContain("HTTP 200")
    expect(await deliveries.getByTestId("deliveries-page").textContent()).toBe("Page 1 of 1")

    await goTo(page, "keys")
    await page.getByTestId("key-name").fill("browser made")
    await page.getByTestId("key-role").selectOption("viewer")
    await page.getByTestId("key-create").click()
    const shown = await page.getByTestId("new-key").textContent()
    expect(shown).toMatch(/sb_[A-Za-z0-9_-]{43}/)
    const key = /sb_[A-Za-z0-9_-]{43}/.exec(shown!)![0]
    expect((await gateway.call("GET", "/api/sessions", { key })).status).toBe(200)
    const row = page.locator(`[data-testid="key-row"][data-key-name="browser made"]`)
    await row.getByTestId("key-revoke").click()
    await expect.poll(() => row.getByTestId("key-status").getAttribute("data-status")).toBe("revoked")
    expect((await gateway.call("GET", "/api/sessions", { key })).status).toBe(401)
    await screenshot(page, "keys-1280")

    await goTo(page, "audit")
    await page.getByTestId("audit-row").first().waitFor()
    await screenshot(page, "audit-1280")
    await context.close()
  }, 60_000)

  it("keeps a webhook created while the list is still being read", async () => {
    const { context, page } = await open(1280)
    await signIn(page, TEST_KEY)
    // The list's read is held until the webhook is made, so it answers with the list as it was.
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    const isListRead = (url: string, method: string) => url.endsWith("/api/webhooks") && method === "GET"
    let asked = 0
    let answered = 0
    page.on("request", (request) => void (isListRead(request.url(), request.method()) && asked++))
    page.on("requestfinished", (request) => void (isListRead(request.url(), request.method()) && answered++))
    await page.route("**/api/webhooks", async (route) => {
      if (route.request().method() !== "GET") return route.continue()
      const response = await route.fetch()
      await held
      return route.fulfill({ response })
    })
    await goTo(page, "webhooks")
    const url = `${receiverUrl}?made-while-reading`
    await page.getByTestId("webhook-url").fill(url)
    await page.getByTestId("webhook-create").click()
    const rows = page.locator(`[data-testid="webhook-row"][data-webhook-url="${url}"]`)
    await rows.waitFor()
    release()
    // Every read answered (the stale one included) and the page given time to show them.
    await expect.poll(() => answered > 0 && answered === asked).toBe(true)
    await page.waitForTimeout(300)
    expect(await rows.count()).toBe(1)
    await context.close()
  })

  it("shows an API refusal as a clear message", async () => {
    const { context, page } = await open(1280)
    await signIn(page, TEST_KEY)
    await goTo(page, "sessions")
    await page.getByTestId("session-name").fill("alice")
    await page.getByTestId("session-create").click()
    await expect.poll(() => page.getByTestId("error").textContent()).toContain("SESSION_NAME_TAKEN")
    await context.close()
  })

  for (const width of [1280, 390]) {
    it(`lays every page out at ${width} px without sideways scrolling`, async () => {
      const { context, page } = await open(width)
      await signIn(page, TEST_KEY)
      const sessionId = (await gateway.call("GET", "/api/sessions")).body.data[0].id as string
      for (const name of ["overview", "sessions", "tester", "messages", "chats", "webhooks", "keys", "audit"]) {
        await goTo(page, name)
        await screenshot(page, `${name}-${width}`)
        expect(await pageOverflow(page), name).toBeLessThanOrEqual(0)
      }
      await page.goto(`${dashboardUrl}#/sessions/${sessionId}`)
      await page.getByTestId("session-detail").waitFor()
      // The sends waiting to go out, against OUTBOUND_BACKLOG_MAX (issue 19).
      expect(await page.getByTestId("session-backlog").textContent()).toMatch(/^\d+ of at most 10000$/)
      await screenshot(page, `session-detail-${width}`)
      expect(await pageOverflow(page), "session detail").toBeLessThanOrEqual(0)
      await context.close()
    }, 60_000)
  }

  it("Swagger UI loads offline, and Authorize with a key makes a call succeed", async () => {
    const { context, page } = await open(1280)
    const reached = await offlineOnly(page)
    await page.goto(`${gateway.baseUrl}/api/docs`)
    const list = page.locator(".opblock.opblock-get").filter({ has: page.locator('.opblock-summary-path[data-path="/api/sessions"]') })
    await list.waitFor({ timeout: 20_000 })
    await list.locator(".opblock-summary").click()
    await list.locator(".try-out__btn").click()
    const execute = async () => {
      await list.locator(".execute").click()
      const status = list.locator(".live-responses-table .response .response-col_status").first()
      await status.waitFor()
      return (await status.textContent())?.trim()
    }
    expect(await execute()).toBe("401")
    await page.locator(".btn.authorize").first().click()
    await page.locator("#api_key_value").fill(TEST_KEY)
    await page.locator(".modal-ux .auth-container").first().locator("button[type=submit]").click()
    await page.locator(".modal-ux .btn-done").first().click()
    await list.locator(".btn-clear").click().catch(() => undefined)
    expect(await execute()).toBe("200")
    await screenshot(page, "swagger-1280")
    expect(reached).toEqual([])
    await context.close()
  }, 60_000)
})
