import type { ChannelOperations, ContactOperations, GroupOperations, LabelOperations } from "../../EngineDirectory.js"
import type { MessageActionOperations, PresenceOperations } from "../../EngineMessageActions.js"
import type { AccountContactOperations, CallOperations, ChatOperations, GroupAdminOperations, ProfileOperations } from "../../EngineAccount.js"
import type { Line } from "./Switchboard.js"

/** How the network makes each kind of operations for a line: one set for the whole network. */
export interface OperationMakers {
  readonly account: (line: Line) => { readonly profile: ProfileOperations; readonly contacts: AccountContactOperations }
  readonly groups: (line: Line) => GroupOperations & GroupAdminOperations
  readonly channels: (line: Line) => ChannelOperations
  readonly labels: (line: Line) => LabelOperations
  readonly directory: (line: Line) => ContactOperations
  readonly messages: (line: Line) => MessageActionOperations
  readonly presence: (line: Line) => PresenceOperations
  readonly chats: (line: Line) => ChatOperations
  readonly calls: (line: Line) => CallOperations
}

/**
 * A line's operations (groups, chats, calls, …), each made the first time it is asked for:
 * most connected sessions never touch most of them, and each is a few dozen closures. A class,
 * so that the getters are its prototype's: as closures of an object literal they and their
 * `once` wrappers were ~30 closures per connected session (issue 19: memory per idle session).
 */
export class LineOperations {
  #account: ReturnType<OperationMakers["account"]> | undefined
  #groups: GroupOperations & GroupAdminOperations | undefined
  #channels: ChannelOperations | undefined
  #labels: LabelOperations | undefined
  #contacts: ContactOperations & AccountContactOperations | undefined
  #messages: MessageActionOperations | undefined
  #presence: PresenceOperations | undefined
  #chats: ChatOperations | undefined
  #calls: CallOperations | undefined

  constructor(readonly line: Line, private readonly makers: OperationMakers) {}

  get profile(): ProfileOperations {
    return (this.#account ??= this.makers.account(this.line)).profile
  }
  get contacts(): ContactOperations & AccountContactOperations {
    return this.#contacts ??= {
      ...this.makers.directory(this.line),
      ...(this.#account ??= this.makers.account(this.line)).contacts
    }
  }
  get groups(): GroupOperations & GroupAdminOperations {
    return this.#groups ??= this.makers.groups(this.line)
  }
  get channels(): ChannelOperations {
    return this.#channels ??= this.makers.channels(this.line)
  }
  get labels(): LabelOperations {
    return this.#labels ??= this.makers.labels(this.line)
  }
  get messages(): MessageActionOperations {
    return this.#messages ??= this.makers.messages(this.line)
  }
  get presence(): PresenceOperations {
    return this.#presence ??= this.makers.presence(this.line)
  }
  get chats(): ChatOperations {
    return this.#chats ??= this.makers.chats(this.line)
  }
  get calls(): CallOperations {
    return this.#calls ??= this.makers.calls(this.line)
  }
}
