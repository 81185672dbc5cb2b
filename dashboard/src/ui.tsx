import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import { ApiError, type Pagination, toApiError } from "./api"

/** Shared pieces: the error box, status badges, pagination, copying, dates. */

/** Every refusal of the API, shown the same way: code, status, message, and per-field details. */
export const ErrorBox = ({ error, onDismiss }: { error: ApiError | null; onDismiss?: () => void }) => {
  if (error === null) return null
  const details = Array.isArray(error.details)
    ? (error.details as ReadonlyArray<unknown>).filter(
      (item): item is { path: string; message: string } => typeof item === "object" && item !== null && "message" in item
    )
    : []
  return (
    <div class="error" role="alert" data-testid="error" data-code={error.code} data-status={error.statusCode}>
      <div class="error-head">
        <strong data-testid="error-code">{error.code}</strong>
        <span class="muted">
          {error.statusCode === 0 ? "no answer" : `${error.statusCode} ${error.error}`}
        </span>
        {onDismiss && (
          <button type="button" class="link" onClick={onDismiss} aria-label="Dismiss">
            ×
          </button>
        )}
      </div>
      <p data-testid="error-message">{error.message}</p>
      {(details.length > 1 || (details.length === 1 && !error.message.includes(details[0]!.message))) && (
        <ul>
          {details.map((detail, index) => (
            <li key={index}>
              {detail.path ? <code>{detail.path}</code> : null} {detail.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

/**
 * A page's error state and a wrapper for its actions: runs one, shows its refusal, and says
 * whether it is still running (to disable buttons meanwhile).
 */
export const useAction = () => {
  const [error, setError] = useState<ApiError | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const run = async <T,>(name: string, action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(name)
    setError(null)
    try {
      return await action()
    } catch (cause) {
      setError(toApiError(cause))
      return undefined
    } finally {
      setBusy(null)
    }
  }
  return { error, setError, busy, run }
}

export const StatusBadge = ({ status, testId }: { status: string; testId?: string }) => (
  <span class={`badge badge-${status}`} data-testid={testId} data-status={status}>
    {status.replace(/_/g, " ")}
  </span>
)

export const Pager = ({
  pagination,
  prefix,
  onPage
}: {
  pagination: Pagination | null
  prefix: string
  onPage: (page: number) => void
}) => {
  const page = pagination?.page ?? 1
  const pages = Math.max(1, pagination?.total_pages ?? 1)
  return (
    <div class="pager">
      <button type="button" data-testid={`${prefix}-prev`} disabled={page <= 1} onClick={() => onPage(page - 1)}>
        ‹ Prev
      </button>
      <span data-testid={`${prefix}-page`}>
        Page {page} of {pages}
      </span>
      <span class="muted">({pagination?.total ?? 0} in all)</span>
      <button type="button" data-testid={`${prefix}-next`} disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next ›
      </button>
    </div>
  )
}

export const CopyButton = ({ text, testId }: { text: string; testId?: string }) => {
  const [done, setDone] = useState(false)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
    } catch {
      // No clipboard API (plain http on another host): select the text for a manual copy.
      const field = document.createElement("textarea")
      field.value = text
      document.body.appendChild(field)
      field.select()
      document.execCommand("copy")
      field.remove()
    }
    setDone(true)
    window.setTimeout(() => setDone(false), 1500)
  }
  return (
    <button type="button" data-testid={testId} onClick={() => void copy()}>
      {done ? "Copied" : "Copy"}
    </button>
  )
}

/** A secret shown this once (a webhook's signing secret, a new API key). */
export const SecretOnce = ({
  label,
  value,
  testId,
  onDismiss
}: {
  label: string
  value: string
  testId: string
  onDismiss: () => void
}) => (
  <div class="notice" role="status">
    <p>
      <strong>{label}</strong> — copy it now: it is shown only this once.
    </p>
    <div class="secret">
      <code data-testid={testId}>{value}</code>
      <CopyButton text={value} testId={`${testId}-copy`} />
      <button type="button" data-testid={`${testId}-dismiss`} onClick={onDismiss}>
        Done
      </button>
    </div>
  </div>
)

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "medium" })

export const formatTime = (iso: string | null | undefined) => {
  if (iso === null || iso === undefined || iso === "") return "—"
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date)
}

export const Time = ({ iso }: { iso: string | null | undefined }) =>
  iso ? <time dateTime={iso} title={iso}>{formatTime(iso)}</time> : <span class="muted">—</span>

export const Field = ({ label, children, wide, narrow }: { label: string; children: ComponentChildren; wide?: boolean; narrow?: boolean }) => (
  <label class={wide ? "field field-wide" : narrow ? "field field-narrow" : "field"}>
    <span>{label}</span>
    {children}
  </label>
)

/** `a, b\nc` → `["a", "b", "c"]`. */
export const splitList = (text: string) =>
  text
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter((item) => item !== "")

/** Runs `work` over `items`, at most `limit` at a time. */
export const mapLimit = async <A, B>(items: ReadonlyArray<A>, limit: number, work: (item: A) => Promise<B>) => {
  const results: Array<B> = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}

/**
 * A delete button that asks first, inline: "Delete" turns into the question with confirm and
 * cancel. Test ids: `<testId>`, `<testId>-confirm`, `<testId>-cancel`.
 */
export const ConfirmDelete = ({ testId, asking, disabled, question, onAsk, onConfirm, onCancel }: {
  testId: string
  asking: boolean
  disabled?: boolean
  question: ComponentChildren
  onAsk: () => void
  onConfirm: () => void
  onCancel: () => void
}) =>
  asking ? (
    <span class="confirm">
      {question}
      <button type="button" class="danger" data-testid={`${testId}-confirm`} onClick={onConfirm}>Delete</button>
      <button type="button" data-testid={`${testId}-cancel`} onClick={onCancel}>Cancel</button>
    </span>
  ) : (
    <button type="button" class="danger" data-testid={testId} disabled={disabled} onClick={onAsk}>Delete</button>
  )
