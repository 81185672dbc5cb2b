import type { SqlError } from "@effect/sql/SqlError"

/**
 * Column conversions shared by the repositories. They keep the SQL portable: booleans travel
 * as INTEGER 0/1, JSON as TEXT, and counts may come back as strings (Postgres' BIGINT).
 */

export const toIntegerBoolean = (value: boolean): number => (value ? 1 : 0)

export const fromIntegerBoolean = (value: unknown): boolean => Number(value) === 1

/** `COUNT(*)` is a number on SQLite and a (BIGINT) string on Postgres. */
export const fromCount = (value: unknown): number => Number(value)

export const toJsonColumn = (value: unknown | null): string | null => (value === null ? null : JSON.stringify(value))

/** Parses a JSON column the Store itself wrote, hence the unchecked type. */
export const fromJsonColumn = <A>(text: string | null): A | null => (text === null ? null : (JSON.parse(text) as A))

/** A UNIQUE / PRIMARY KEY violation, as reported by better-sqlite3 or by Postgres (SQLSTATE 23505). */
export const isUniqueViolation = (error: SqlError): boolean => {
  const code = (error.cause as { readonly code?: unknown } | undefined)?.code
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "23505"
}
