/**
 * Tables keyed by what a user (or an upstream, or a config file) says: a colour name, a theme, a
 * voice. A plain object answers `constructor`, `__proto__`, `toString` or `hasOwnProperty` with
 * what it inherits from Object.prototype, so a key is looked up only among the table's own entries.
 */

/** `table[key]` when the table itself holds `key`; undefined for anything else, inherited names included. */
export function lookup<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined
}

/** Whether `key` is one of the table's own keys (never an inherited name). */
export function hasKey(table: object, key: string): boolean {
  return Object.hasOwn(table, key)
}
