import { Context } from "effect"
import type { AuthState } from "../../Engine.js"



/** The engines' persisted authentication state, one `AuthState` per session. */
export class AuthRepo extends Context.Tag("switchboard/AuthRepo")<AuthRepo, {
  readonly forSession: (sessionId: string) => AuthState
}>() {}
