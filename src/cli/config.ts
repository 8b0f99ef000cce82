/**
 * Sessions kept by the CLI in `<configDir>/sessions.json` (mode 0600 in a 0700 folder): per server
 * URL (or embedded data directory) any number of accounts, one of them active. `PLAZA_TOKEN`
 * overrides them, `--as USER` picks another account for one command.
 *
 * The file is `{"version": 2, "targets": {KEY: {"active": USERNAME, "accounts": {USERNAME: session}}}}`.
 * Version 1 (one session per key, `{KEY: session}`) is still read, and rewritten as version 2 on
 * the next change.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'

export interface StoredSession {
  token: string
  username: string
  expires_at: string
}

export interface TargetAccounts {
  active: string | null
  accounts: Record<string, StoredSession>
}

interface SessionFile {
  version: 2
  targets: Record<string, TargetAccounts>
}

export interface AccountEntry {
  username: string
  expires_at: string
  active: boolean
}

const isSession = (value: unknown): value is StoredSession =>
  !!value && typeof value === 'object' && typeof (value as StoredSession).token === 'string' && typeof (value as StoredSession).username === 'string'

/** Usernames are case-insensitive; `@alice` is alice. */
const normal = (username: string) => username.replace(/^@/, '').toLowerCase()

/**
 * A table keyed by server URLs and usernames, without a prototype: an account named `constructor`
 * or `__proto__` is an entry like any other, and a name nobody added finds nothing.
 */
function dict<T>(entries: Iterable<readonly [string, T]> = []): Record<string, T> {
  const table = Object.create(null) as Record<string, T>
  for (const [key, value] of entries) table[key] = value
  return table
}

/** Reads either version into version 2; anything unreadable is an empty file (as before). */
export function migrate(parsed: unknown): SessionFile {
  const file: SessionFile = { version: 2, targets: dict() }
  if (!parsed || typeof parsed !== 'object') return file
  const raw = parsed as Record<string, unknown>
  if (raw.version === 2 && raw.targets && typeof raw.targets === 'object') {
    for (const [key, entry] of Object.entries(raw.targets as Record<string, TargetAccounts>)) {
      const accounts = dict(Object.entries(entry?.accounts ?? {}).filter(([, session]) => isSession(session)))
      if (Object.keys(accounts).length === 0) continue
      const active = entry.active && accounts[entry.active] ? entry.active : null
      file.targets[key] = { active, accounts }
    }
    return file
  }
  // Version 1: one session per key.
  for (const [key, session] of Object.entries(raw)) {
    if (!isSession(session)) continue
    const name = normal(session.username)
    file.targets[key] = { active: name, accounts: dict([[name, session]]) }
  }
  return file
}

export class SessionStore {
  readonly file: string

  constructor(readonly configDir: string) {
    this.file = path.join(configDir, 'sessions.json')
  }

  #read(): SessionFile {
    try {
      return migrate(JSON.parse(readFileSync(this.file, 'utf8')))
    } catch {
      return migrate(null)
    }
  }

  #write(sessions: SessionFile) {
    mkdirSync(this.configDir, { recursive: true, mode: 0o700 })
    chmodSync(this.configDir, 0o700)
    const temp = `${this.file}.${process.pid}.tmp`
    writeFileSync(temp, JSON.stringify(sessions, null, 2) + '\n', { mode: 0o600 })
    renameSync(temp, this.file)
  }

  /** The active account's session for `key`, or the named account's (`--as`). */
  get(key: string, username?: string): StoredSession | undefined {
    const target = this.#read().targets[key]
    if (!target) return undefined
    const name = username === undefined ? target.active : normal(username)
    return name ? target.accounts[name] : undefined
  }

  /** The accounts kept for `key`, in the order they were added. */
  accounts(key: string): AccountEntry[] {
    const target = this.#read().targets[key]
    if (!target) return []
    return Object.entries(target.accounts).map(([name, session]) => ({ username: session.username, expires_at: session.expires_at, active: name === target.active }))
  }

  /** Adds (or refreshes) an account and makes it the active one. */
  set(key: string, session: StoredSession) {
    const file = this.#read()
    const target = (file.targets[key] ??= { active: null, accounts: dict() })
    const name = normal(session.username)
    target.accounts[name] = session
    target.active = name
    this.#write(file)
  }

  /** Makes another kept account the active one; false when there is no such account. */
  switch(key: string, username: string): StoredSession | undefined {
    const file = this.#read()
    const target = file.targets[key]
    const name = normal(username)
    if (!target?.accounts[name]) return undefined
    target.active = name
    this.#write(file)
    return target.accounts[name]
  }

  /**
   * Forgets the account holding `token` (the active one when no token is given). When it was the
   * active account, the first one left becomes active. Returns the new active username, if any.
   */
  remove(key: string, token?: string): { removed: boolean; active: string | null } {
    const file = this.#read()
    const target = file.targets[key]
    if (!target) return { removed: false, active: null }
    const name = token === undefined ? target.active : (Object.entries(target.accounts).find(([, session]) => session.token === token)?.[0] ?? null)
    if (!name || !target.accounts[name]) return { removed: false, active: target.active ? target.accounts[target.active]?.username ?? null : null }
    delete target.accounts[name]
    if (target.active === name) target.active = Object.keys(target.accounts)[0] ?? null
    if (Object.keys(target.accounts).length === 0) delete file.targets[key]
    this.#write(file)
    return { removed: true, active: target.active ? target.accounts[target.active].username : null }
  }

  delete(key: string) {
    this.remove(key)
  }
}
