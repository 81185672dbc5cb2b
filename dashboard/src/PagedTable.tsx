import type { ComponentChildren } from "preact"
import type { PageOf } from "./api"
import { Pager } from "./ui"

/**
 * One page of a list as a table of cards: `waiting` while nothing has loaded, `empty` (test id
 * `<prefix>-empty`) when there is nothing at all, else the pager (test ids `<prefix>-prev`, …)
 * above one `row` an item.
 */
export const PagedTable = <Item,>({ result, waiting, empty, prefix, onPage, columns, row }: {
  result: PageOf<Item> | null
  waiting: string
  empty: string
  prefix: string
  onPage: (page: number) => void
  /** the column headings, "" for an untitled one (e.g. the buttons) */
  columns: ReadonlyArray<string>
  row: (item: Item) => ComponentChildren
}) =>
  result === null ? (
    <p class="muted">{waiting}</p>
  ) : result.items.length === 0 ? (
    <p class="muted" data-testid={`${prefix}-empty`}>{empty}</p>
  ) : (
    <>
      <Pager pagination={result.pagination} prefix={prefix} onPage={onPage} />
      <div class="table-wrap">
        <table class="table cards">
          <thead>
            <tr>{columns.map((column, index) => <th key={index}>{column}</th>)}</tr>
          </thead>
          <tbody>{result.items.map(row)}</tbody>
        </table>
      </div>
    </>
  )
