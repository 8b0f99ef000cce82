/**
 * The base of every client command: picks remote or embedded once, keeps the session, and turns
 * failures into a one-line message with gh's exit codes (1 error, 2 usage, 4 needs login).
 */
import { Command, Errors, Flags, type Interfaces } from '@oclif/core'
import { isTRPCClientError } from '@trpc/client'
import { createPlazaClient, resolveTarget, targetKey, UsageError, type PlazaClient, type Target } from './client.js'
import { SessionStore, type StoredSession } from './config.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof PlazaCommand)['baseFlags'] & T['flags']>
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>

export const EXIT = { error: 1, usage: 2, needsLogin: 4 } as const

/** A command that cannot run without a session. */
export class NeedsLoginError extends Error {
  constructor(message = 'not logged in: run `plaza social login` (or `plaza social register`) first') {
    super(message)
  }
}

export abstract class PlazaCommand<T extends typeof Command> extends Command {
  static enableJsonFlag = true

  static baseFlags = {
    url: Flags.string({
      description: 'server to use, e.g. http://127.0.0.1:8080; without it, runs embedded on --data-dir',
      env: 'PLAZA_URL',
      helpGroup: 'TARGET',
    }),
    'data-dir': Flags.string({
      description: 'data directory when embedded (default ./.plaza)',
      env: 'PLAZA_DATA_DIR',
      helpGroup: 'TARGET',
    }),
  }

  protected flags!: BaseFlags<T>
  protected args!: BaseArgs<T>
  #target?: Target
  #client?: Promise<PlazaClient>
  #sessions?: SessionStore

  public override async init(): Promise<void> {
    await super.init()
    const { args, flags } = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (super.ctor as typeof PlazaCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    })
    this.flags = flags as BaseFlags<T>
    this.args = args as BaseArgs<T>
  }

  /** Remote server or embedded data directory, as the flags and environment say. */
  protected get target(): Target {
    this.#target ??= resolveTarget(this.flags.url, this.flags['data-dir'])
    return this.#target
  }

  protected get sessions(): SessionStore {
    this.#sessions ??= new SessionStore(this.config.configDir)
    return this.#sessions
  }

  /** The token to send: `PLAZA_TOKEN`, else the stored session for this target. */
  protected token(): string | null {
    return process.env.PLAZA_TOKEN || this.sessions.get(targetKey(this.target))?.token || null
  }

  protected saveSession(session: StoredSession) {
    this.sessions.set(targetKey(this.target), session)
  }

  protected forgetSession() {
    this.sessions.delete(targetKey(this.target))
  }

  /** Fails with exit 4 when there is no session at all (before any request is made). */
  protected requireLogin() {
    if (!this.token()) throw new NeedsLoginError()
  }

  /** The tRPC client, created on first use. */
  protected client(): Promise<PlazaClient> {
    this.#client ??= createPlazaClient(this.target, () => this.token())
    return this.#client
  }

  /** Writes human output: only when --json is off (data on stdout, nothing else). */
  protected human(text: string) {
    if (!this.jsonEnabled()) this.log(text)
  }

  protected override async catch(error: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    if (error instanceof Errors.CLIError || (error as { oclif?: unknown }).oclif) return super.catch(error)
    return super.catch(new Errors.CLIError(describeFailure(error, this.#target), { exit: exitCodeOf(error) }))
  }

  protected override async finally(error: Error | undefined): Promise<unknown> {
    if (this.#client) await (await this.#client.catch(() => null))?.close()
    return super.finally(error)
  }
}

function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return EXIT.usage
  if (error instanceof NeedsLoginError) return EXIT.needsLogin
  if (isTRPCClientError(error)) {
    const code = (error.data as { code?: string } | undefined)?.code
    if (code === 'UNAUTHORIZED') return EXIT.needsLogin
  }
  return EXIT.error
}

/** One line a person can act on; never a stack trace. */
export function describeFailure(error: unknown, target?: Target): string {
  if (isTRPCClientError(error)) {
    const code = (error.data as { code?: string } | undefined)?.code
    if (!code) {
      const cause = (error.cause as { cause?: { code?: string; message?: string } } | undefined)?.cause
      if (target?.kind === 'remote') return `cannot reach ${target.url}: ${cause?.code ?? cause?.message ?? error.message}`
    }
    if (code === 'UNAUTHORIZED') return `${error.message} (log in with \`plaza social login\`)`
    return error.message
  }
  return (error as Error)?.message ?? String(error)
}
