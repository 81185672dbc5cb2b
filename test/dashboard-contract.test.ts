import { execFile } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"

/**
 * The dashboard's request and response types are the server's schemas (dashboard/src/model.ts
 * imports them as types). Here a copy of the dashboard and of src/domain has a field renamed on
 * the server's side, and the dashboard's type check must then refuse the pages that use it.
 */
const repo = join(import.meta.dirname, "..")
const copy = mkdtempSync(join(tmpdir(), "dashboard-contract-"))
afterAll(() => rmSync(copy, { recursive: true, force: true }))

const rename = (file: string, from: string, to: string) => {
  const path = join(copy, file)
  const text = readFileSync(path, "utf8")
  expect(text).toContain(from)
  writeFileSync(path, text.replace(from, to))
}

/** The dashboard's type check on the copy: its exit code and what it printed. */
const typeCheckCopy = async () => {
  const tsc = join(repo, "node_modules", "typescript", "bin", "tsc")
  try {
    await promisify(execFile)(process.execPath, [tsc, "-p", join(copy, "dashboard", "tsconfig.json")], { cwd: copy })
    return { failed: false, output: "" }
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string }
    return { failed: true, output: stdout + stderr }
  }
}

describe("the dashboard's contract with the server", () => {
  it("fails the dashboard's type check when the server renames a field it reads or sends", async () => {
    cpSync(join(repo, "dashboard"), join(copy, "dashboard"), { recursive: true })
    cpSync(join(repo, "src", "domain"), join(copy, "src", "domain"), { recursive: true })
    symlinkSync(join(repo, "node_modules"), join(copy, "node_modules"), "dir")
    // A field of an answer (a message's direction) and one of a request (a webhook's switch).
    rename("src/domain/Message.ts", "  fromMe: Schema.Boolean,", "  isFromMe: Schema.Boolean,")
    rename("src/domain/Webhook.ts", "  enabled: Schema.optional(Schema.Boolean),", "  active: Schema.optional(Schema.Boolean),")

    const { failed, output } = await typeCheckCopy()

    expect(failed).toBe(true)
    expect(output).toMatch(/dashboard\/src\/pages\/Messages\.tsx.*Property 'fromMe' does not exist/)
    expect(output).toMatch(/dashboard\/src\/pages\/WebhookForm\.tsx.*'enabled' does not exist/)
  }, 120_000)
})
