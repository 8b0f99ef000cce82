/**
 * Sessions kept by the CLI, one per server URL (or embedded data directory), in
 * `<configDir>/sessions.json`: mode 0600 in a 0700 folder. `PLAZA_TOKEN` overrides the stored one.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'

export interface StoredSession {
  token: string
  username: string
  expires_at: string
}

type SessionFile = Record<string, StoredSession>

export class SessionStore {
  readonly file: string

  constructor(readonly configDir: string) {
    this.file = path.join(configDir, 'sessions.json')
  }

  #read(): SessionFile {
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8'))
      return parsed && typeof parsed === 'object' ? parsed : {}
    } catch {
      return {}
    }
  }

  #write(sessions: SessionFile) {
    mkdirSync(this.configDir, { recursive: true, mode: 0o700 })
    chmodSync(this.configDir, 0o700)
    const temp = `${this.file}.${process.pid}.tmp`
    writeFileSync(temp, JSON.stringify(sessions, null, 2) + '\n', { mode: 0o600 })
    renameSync(temp, this.file)
  }

  get(key: string): StoredSession | undefined {
    return this.#read()[key]
  }

  set(key: string, session: StoredSession) {
    this.#write({ ...this.#read(), [key]: session })
  }

  delete(key: string) {
    const sessions = this.#read()
    if (!(key in sessions)) return
    delete sessions[key]
    this.#write(sessions)
  }
}
