/**
 * `switchboard/store/postgres`: the Store on Postgres (a pool, then pending migrations). Its own
 * entry, so that a program on SQLite never loads `pg`.
 */
export { PgStoreLive } from "../layers/store/PgStore.js"
