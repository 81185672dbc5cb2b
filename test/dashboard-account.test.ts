import type { Page } from "playwright-core"
import sharp from "sharp"
import { describe, expect, it } from "vitest"
import { pageOverflow, screenshot } from "./support/browser.js"
import { goTo, openPage, signIn, useDashboard } from "./support/dashboardBrowser.js"
import { eventually, readySession, TEST_KEY } from "./support/gateway.js"
import { unavailable } from "./support/servers/availability.js"

/**
 * The account around the messages in a real browser, against a gateway on the sandbox engine:
 * the Chats page (list, unread counts that follow the live stream, archive/pin/mute/unread,
 * history, delete) and, on a session's page, its profile, settings and call log.
 */
describe.skipIf(unavailable("chromium", "the dashboard in a browser") !== undefined)("the dashboard's chats, profile, settings and calls", () => {
  const dashboard = useDashboard()

  const signedIn = async (width = 1280) => {
    const { browser, dashboardUrl } = dashboard()
    const { context, page } = await openPage(browser, width)
    await signIn(page, dashboardUrl, TEST_KEY)
    await page.getByTestId("nav-overview").waitFor()
    return { context, page }
  }

  const sendText = async (fromId: string, toPhone: string, text: string) => {
    const sent = await dashboard().gateway.call("POST", `/api/sessions/${fromId}/messages/send-text`, { body: { chatId: toPhone, text } })
    expect(sent.status, JSON.stringify(sent.body)).toBe(201)
  }

  /** The chat row whose newest message says `text`, and an attribute of it. */
  const chatRow = (page: Page, text: string) => page.getByTestId("chat-row").filter({ hasText: text })
  const attributeOf = (page: Page, text: string, name: string) => chatRow(page, text).getAttribute(name)

  it("lists a session's chats with their unread counts live, and archives, pins, mutes, marks unread, asks for history and deletes one", async () => {
    const alice = await readySession(dashboard().gateway, "alice")
    const bob = await readySession(dashboard().gateway, "bob")
    await sendText(alice.id, bob.phone, "hello bob, first")
    const { context, page } = await signedIn()
    await goTo(page, "chats")
    const session = page.getByTestId("chats-session")
    await session.locator("option", { hasText: "bob" }).waitFor({ state: "attached" })
    await session.selectOption({ label: "bob" })
    await expect.poll(() => attributeOf(page, "hello bob, first", "data-unread"), { timeout: 15_000 }).toBe("1")

    // A second message moves the count while the page is open: it follows the live stream.
    await sendText(alice.id, bob.phone, "hello bob, second")
    await expect.poll(() => attributeOf(page, "hello bob, second", "data-unread"), { timeout: 15_000 }).toBe("2")
    const chatId = await chatRow(page, "hello bob, second").getAttribute("data-chat-id")
    expect(chatId).toMatch(/@(c\.us|lid)$/)
    const chatPath = `/api/sessions/${bob.id}/chats/${encodeURIComponent(chatId!)}`

    await chatRow(page, "hello bob, second").getByTestId("chat-open").click()
    const view = page.getByTestId("chat-view")
    await expect.poll(() => view.getByTestId("message-text").allTextContents(), { timeout: 10_000 })
      .toEqual(["hello bob, second", "hello bob, first"])
    await screenshot(page, "chats-1280")

    await view.getByTestId("chat-archive").click()
    await expect.poll(() => attributeOf(page, "hello bob, second", "data-archived")).toBe("true")
    await view.getByTestId("chat-pin").click()
    await expect.poll(() => attributeOf(page, "hello bob, second", "data-pinned")).toBe("true")
    await view.getByTestId("chat-mute-8h").click()
    await expect.poll(() => attributeOf(page, "hello bob, second", "data-muted")).toBe("true")
    const kept = (await dashboard().gateway.call("GET", chatPath)).body
    expect(kept).toMatchObject({ archived: true, pinned: true })
    // Eight hours from now, give or take the test's own minute.
    expect(Date.parse(kept.mutedUntil) - Date.now()).toBeGreaterThan(8 * 3600_000 - 60_000)
    await view.getByTestId("chat-unmute").click()
    await expect.poll(() => attributeOf(page, "hello bob, second", "data-muted")).toBe("false")

    // The filters: archived only keeps it, not archived leaves it out.
    await page.getByTestId("chats-archived").selectOption("true")
    await chatRow(page, "hello bob, second").waitFor()
    await page.getByTestId("chats-archived").selectOption("false")
    await page.getByTestId("chats-empty").waitFor()
    await page.getByTestId("chats-archived").selectOption("")
    await view.getByTestId("chat-archive").click()
    await expect.poll(() => attributeOf(page, "hello bob, second", "data-archived")).toBe("false")

    // Read through the API, then marked unread again from the page.
    expect((await dashboard().gateway.call("POST", `/api/sessions/${bob.id}/messages/read`, { body: { chatId } })).status).toBeLessThan(300)
    await expect.poll(() => attributeOf(page, "hello bob, second", "data-unread"), { timeout: 10_000 }).toBe("0")
    await page.getByTestId("chats-unread").check()
    await page.getByTestId("chats-empty").waitFor()
    await page.getByTestId("chats-unread").uncheck()
    await view.getByTestId("chat-mark-unread").click()
    await expect.poll(() => attributeOf(page, "hello bob, second", "data-unread")).not.toBe("0")

    await view.getByTestId("chat-history-count").fill("20")
    await view.getByTestId("chat-history-request").click()
    await expect.poll(() => view.getByTestId("chat-history-notice").textContent()).toContain("20 older messages")

    await view.getByTestId("chat-delete").click()
    await view.getByTestId("chat-delete-confirm").click()
    await page.getByTestId("chats-empty").waitFor()
    expect(await page.getByTestId("chat-view").count()).toBe(0)
    expect((await dashboard().gateway.call("GET", chatPath)).status).toBe(404)
    await context.close()
  }, 90_000)

  it("edits the session's profile name, about and picture", async () => {
    const carol = await readySession(dashboard().gateway, "carol")
    const { context, page } = await signedIn()
    await page.goto(`${dashboard().dashboardUrl}#/sessions/${carol.id}`)
    const profile = page.getByTestId("profile-panel")
    await profile.getByTestId("profile-name").waitFor({ timeout: 10_000 })

    await profile.getByTestId("profile-name").fill("Carol at the desk")
    await profile.getByTestId("profile-name-save").click()
    await expect.poll(() => profile.getByTestId("profile-current-name").textContent()).toBe("Carol at the desk")
    await profile.getByTestId("profile-about").fill("Answering 9 to 5")
    await profile.getByTestId("profile-about-save").click()
    await expect.poll(() => profile.getByTestId("profile-current-about").textContent()).toBe("Answering 9 to 5")

    const picture = await sharp({ create: { width: 800, height: 500, channels: 3, background: "#2a7" } }).png().toBuffer()
    await profile.getByTestId("profile-picture-file").setInputFiles({ name: "me.png", mimeType: "image/png", buffer: picture })
    await profile.getByTestId("profile-picture-upload").click()
    const shown = profile.getByTestId("profile-picture")
    await shown.waitFor({ timeout: 10_000 })
    // The picture is shown as WhatsApp keeps it: a 640×640 square.
    await expect.poll(() => shown.evaluate((image) => {
      const { naturalWidth, naturalHeight } = image as unknown as { naturalWidth: number; naturalHeight: number }
      return [naturalWidth, naturalHeight]
    })).toEqual([640, 640])
    const kept = (await dashboard().gateway.call("GET", `/api/sessions/${carol.id}/profile`)).body
    expect(kept).toMatchObject({ name: "Carol at the desk", about: "Answering 9 to 5" })
    expect(kept.picture).not.toBeNull()
    await screenshot(page, "session-profile-1280")

    await profile.getByTestId("profile-picture-remove").click()
    await profile.getByTestId("profile-no-picture").waitFor()
    expect((await dashboard().gateway.call("GET", `/api/sessions/${carol.id}/profile`)).body.picture).toBeNull()
    await context.close()
  }, 60_000)

  it("lists a session's calls live, rejects a ringing one, and with rejectCalls saved rejects the next by itself", async () => {
    const dave = await readySession(dashboard().gateway, "dave")
    const ring = async (from: string) => {
      const rung = await dashboard().gateway.call("POST", `/api/sandbox/sessions/${dave.id}/incoming-call`, { body: { from } })
      expect(rung.status, JSON.stringify(rung.body)).toBeLessThan(300)
    }
    const { context, page } = await signedIn()
    await page.goto(`${dashboard().dashboardUrl}#/sessions/${dave.id}`)
    const log = page.getByTestId("call-log")
    await log.getByTestId("calls-empty").waitFor({ timeout: 10_000 })

    await ring("15550001111")
    const ringing = log.getByTestId("call-row").filter({ hasText: "15550001111" })
    await expect.poll(() => ringing.getAttribute("data-status"), { timeout: 10_000 }).toBe("offer")
    await ringing.getByTestId("call-reject").click()
    await expect.poll(() => ringing.getAttribute("data-status"), { timeout: 10_000 }).toBe("reject")

    const settings = page.getByTestId("settings-panel")
    await settings.getByTestId("settings-reject-calls").check()
    await settings.getByTestId("settings-reject-message").fill("No calls here, please write.")
    await settings.getByTestId("settings-read-receipts").uncheck()
    await settings.getByTestId("settings-history-sync").selectOption("full")
    await settings.getByTestId("settings-save").click()
    await settings.getByTestId("settings-saved").waitFor()
    expect((await dashboard().gateway.call("GET", `/api/sessions/${dave.id}/settings`)).body).toEqual({
      rejectCalls: true, rejectCallMessage: "No calls here, please write.", readReceipts: false, markOnlineOnConnect: false, historySync: "full"
    })

    await ring("15550002222")
    const rejected = log.getByTestId("call-row").filter({ hasText: "15550002222" })
    await expect.poll(() => rejected.getAttribute("data-status"), { timeout: 10_000 }).toBe("reject")
    expect(await rejected.getByTestId("call-reject").count()).toBe(0)
    await eventually(
      () => dashboard().gateway.call("GET", `/api/sessions/${dave.id}/messages?direction=out`),
      (sent) => sent.body.data.some((message: { text?: string }) => message.text === "No calls here, please write.")
    )
    await screenshot(page, "session-settings-calls-1280")
    await context.close()
  }, 60_000)

  it("lays the Chats page and a session's panels out at 390 px without sideways scrolling", async () => {
    const sessionId = (await dashboard().gateway.call("GET", "/api/sessions")).body.data[0].id as string
    const { context, page } = await signedIn(390)
    await goTo(page, "chats")
    await page.getByTestId("chats-session").waitFor()
    await screenshot(page, "chats-390")
    expect(await pageOverflow(page), "chats").toBeLessThanOrEqual(0)
    await page.goto(`${dashboard().dashboardUrl}#/sessions/${sessionId}`)
    await page.getByTestId("settings-panel").getByTestId("settings-save").waitFor({ timeout: 10_000 })
    await screenshot(page, "session-panels-390")
    expect(await pageOverflow(page), "session panels").toBeLessThanOrEqual(0)
    await context.close()
  }, 60_000)
})
