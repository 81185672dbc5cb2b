/**
 * `switchboard/store/postgres`: the Store on Postgres (a pool, then pending migrations). Its own
 * entry, so that a program on SQLite never loads `pg`.
 */
import { storeOfDatabase } from "../app/App.js"

export { PgStoreLive } from "../layers/store/PgStore.js"

/**
 * The whole Store on Postgres (the pool, its migrations, every repository), to give as
 * `Switchboard.layer({ store: postgresStore(url), … })`; `PgStoreLive` is its `SqlClient` alone.
 */
export const postgresStore = (url: `postgres://${string}` | `postgresql://${string}`) => storeOfDatabase(url)
