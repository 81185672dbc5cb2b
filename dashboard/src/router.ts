import { useEffect, useState } from "preact/hooks"

/** Hash routes: `#/overview`, `#/sessions`, `#/sessions/<id>`, `#/tester`, …. */

export type PageName = "overview" | "sessions" | "tester" | "messages" | "chats" | "webhooks" | "keys" | "audit"

export const pages: ReadonlyArray<{ readonly name: PageName; readonly label: string }> = [
  { name: "overview", label: "Overview" },
  { name: "sessions", label: "Sessions" },
  { name: "tester", label: "Message tester" },
  { name: "messages", label: "Messages" },
  { name: "chats", label: "Chats" },
  { name: "webhooks", label: "Webhooks" },
  { name: "keys", label: "API keys" },
  { name: "audit", label: "Audit log" }
]

export interface Route {
  readonly page: PageName
  /** `#/sessions/<id>`: the session's id. */
  readonly param: string | null
}

const parse = (hash: string): Route => {
  const [first, ...rest] = hash.replace(/^#\/?/, "").split("/")
  const page = pages.find((candidate) => candidate.name === first)?.name ?? "overview"
  const param = rest.length > 0 && rest[0] !== "" ? decodeURIComponent(rest.join("/")) : null
  return { page, param }
}

export const href = (page: PageName, param?: string) => `#/${page}${param === undefined ? "" : `/${encodeURIComponent(param)}`}`

export const useRoute = (): Route => {
  const [route, setRoute] = useState(() => parse(location.hash))
  useEffect(() => {
    const update = () => setRoute(parse(location.hash))
    window.addEventListener("hashchange", update)
    return () => window.removeEventListener("hashchange", update)
  }, [])
  return route
}
