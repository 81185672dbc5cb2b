import { useEffect, useState } from "preact/hooks"
import { type ApiError, api, type Session, toApiError } from "./api"

/** The sessions the key may see, for the pickers of the tester, messages and webhooks pages. */
export const useSessionList = () => {
  const [sessions, setSessions] = useState<ReadonlyArray<Session> | null>(null)
  const [error, setError] = useState<ApiError | null>(null)
  const reload = async () => {
    try {
      setSessions(await api.sessions.list())
      setError(null)
    } catch (cause) {
      setError(toApiError(cause))
      setSessions([])
    }
  }
  useEffect(() => {
    void reload()
  }, [])
  return { sessions, error, reload }
}
