import { render } from "preact"
import { useEffect, useState } from "preact/hooks"
import { type ApiError, getApiBase, keyStore, loadConfig, setUnauthorizedHandler } from "./api"
import { Audit } from "./pages/Audit"
import { Chats } from "./pages/Chats"
import { Keys } from "./pages/Keys"
import { Messages } from "./pages/Messages"
import { Overview } from "./pages/Overview"
import { SessionDetail } from "./pages/SessionDetail"
import { Sessions } from "./pages/Sessions"
import { SignIn } from "./pages/SignIn"
import { Tester } from "./pages/Tester"
import { Webhooks } from "./pages/Webhooks"
import { href, type PageName, pages, type Route, useRoute } from "./router"
import "./styles.css"

const Page = ({ route }: { route: Route }) => {
  switch (route.page) {
    case "overview":
      return <Overview />
    case "sessions":
      return route.param === null ? <Sessions /> : <SessionDetail key={route.param} sessionId={route.param} />
    case "tester":
      return <Tester />
    case "messages":
      return <Messages />
    case "chats":
      return <Chats />
    case "webhooks":
      return <Webhooks />
    case "keys":
      return <Keys />
    case "audit":
      return <Audit />
  }
}

const Nav = ({ current, onSignOut }: { current: PageName; onSignOut: () => void }) => (
  <header class="topbar">
    <a class="brand" href={href("overview")}>
      Switchboard
    </a>
    <nav class="nav" aria-label="Main">
      {pages.map((page) => (
        <a
          key={page.name}
          href={href(page.name)}
          data-testid={`nav-${page.name}`}
          aria-current={page.name === current ? "page" : undefined}
        >
          {page.label}
        </a>
      ))}
      <button type="button" class="sign-out" data-testid="sign-out" onClick={onSignOut}>
        Sign out
      </button>
    </nav>
  </header>
)

const App = () => {
  const route = useRoute()
  const [ready, setReady] = useState(false)
  const [signedIn, setSignedIn] = useState(() => keyStore.get() !== null)
  const [reason, setReason] = useState<ApiError | null>(null)

  useEffect(() => {
    setUnauthorizedHandler((error) => {
      keyStore.clear()
      setReason(error)
      setSignedIn(false)
    })
    void loadConfig().then(() => setReady(true))
  }, [])

  if (!ready) return <p class="loading">Loading…</p>

  if (!signedIn) {
    return (
      <SignIn
        reason={reason}
        onSignedIn={(key) => {
          keyStore.set(key)
          setReason(null)
          setSignedIn(true)
        }}
      />
    )
  }

  const signOut = () => {
    keyStore.clear()
    setReason(null)
    setSignedIn(false)
  }

  return (
    <div class="shell">
      <Nav current={route.page} onSignOut={signOut} />
      <main class="content" data-api={getApiBase()}>
        <Page route={route} />
      </main>
    </div>
  )
}

render(<App />, document.getElementById("app")!)
