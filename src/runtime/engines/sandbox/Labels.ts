import { Effect, Option } from "effect"
import type { Label } from "../../../domain/Label.js"
import { EngineEvent } from "../../Engine.js"
import type { LabelChange, LabelOperations } from "../../EngineDirectory.js"
import { type Directory, emptyLabelBook, type LabelBook, refuse } from "./Directory.js"
import type { Line, Switchboard } from "./Switchboard.js"

/**
 * Labels of WhatsApp Business accounts. A sandbox session is one when the network says so
 * (`SandboxFaults.setBusiness`, or the network's `businessByDefault`); any other is refused with
 * `NOT_A_BUSINESS_ACCOUNT`, a conflict with the account's state. Each session has its own book:
 * label ids "1", "2", … in creation order, colours 0–19 in turn unless one is asked for. Every
 * change is also reported to the session itself as a `LabelChanged`, as the phone's app-state
 * sync would, held like a message. Runs under the network's lock.
 */

const labelNotFound = (labelId: string) => refuse("not_found", "LABEL_NOT_FOUND", `no label ${labelId}`)
const notBusiness = refuse("conflict", "NOT_A_BUSINESS_ACCOUNT", "labels exist on WhatsApp Business accounts only")

/** WhatsApp Business offers this many label colours. */
const labelColors = 20

export const labelsOf = (switchboard: Switchboard, directory: Directory) => {
  const { handTo } = switchboard
  const { isBusiness, labelBooks, lookup, putLabels } = directory

  const bookOf = (line: Line) =>
    isBusiness(line.sessionId).pipe(
      Effect.filterOrFail((business) => business, () => notBusiness),
      Effect.zipRight(lookup(labelBooks, line.sessionId)),
      Effect.map(Option.getOrElse(() => emptyLabelBook))
    )

  const labelIn = (book: LabelBook, labelId: string) =>
    book.labels.some((label) => label.id === labelId) ? Effect.succeed(labelId) : Effect.fail(labelNotFound(labelId))

  const save = (line: Line, book: LabelBook, change: LabelChange) =>
    putLabels(line.sessionId, book).pipe(Effect.zipRight(handTo(line.sessionId, EngineEvent.LabelChanged({ change }))))

  const create = (line: Line, name: string, color: number | null) =>
    Effect.gen(function*() {
      const book = yield* bookOf(line)
      const label: Label = { id: String(book.created + 1), name, color: color ?? book.created % labelColors }
      yield* save(line, { ...book, labels: [...book.labels, label], created: book.created + 1 }, { kind: "label", label, deleted: false })
      return label
    })

  /** Labelling a chat that has the label already, or unlabelling one that has not, changes nothing. */
  const associate = (line: Line, chatId: string, labelId: string, added: boolean) =>
    Effect.gen(function*() {
      const book = yield* bookOf(line)
      yield* labelIn(book, labelId)
      const has = book.chats.some((chat) => chat.chatId === chatId && chat.labelId === labelId)
      if (has === added) return
      const chats = added
        ? [...book.chats, { chatId, labelId }]
        : book.chats.filter((chat) => !(chat.chatId === chatId && chat.labelId === labelId))
      yield* save(line, { ...book, chats }, { kind: "association", chatId, labelId, added })
    })

  const operations = (line: Line): LabelOperations => {
    const run = directory.onBehalfOf(line)
    return {
      create: (name, color) => run(create(line, name, color)),
      addToChat: (chatId, labelId) => run(associate(line, chatId, labelId, true)),
      removeFromChat: (chatId, labelId) => run(associate(line, chatId, labelId, false))
    }
  }

  return { operations }
}
