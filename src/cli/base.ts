/**
 * The base of every client command: picks remote or embedded once, keeps the session, and turns
 * failures into a one-line message on stderr with gh's exit codes (1 error, 2 usage, 4 needs login).
 */
import path from 'node:path'
import { Args, Command, Errors, Flags, type Interfaces } from '@oclif/core'
import { isTRPCClientError } from '@trpc/client'
import { createPlazaClient, remoteFetch, resolveTarget, targetKey, unreachable, UsageError, type PlazaClient, type Target } from './client.js'
import { CliCommand, jqFlags } from './command.js'
import { SessionStore, type StoredSession } from './config.js'
import { oclifExit, printError } from './errors.js'
import type { UploadResult } from '../shared/types.js'
import type { View } from './ui/format.js'
import type { UploadRoute } from './uploads.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof PlazaCommand)['baseFlags'] & T['flags']>
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>

export const EXIT = { error: 1, usage: 2, needsLogin: 4 } as const

/** A command that cannot run without a session. */
export class NeedsLoginError extends Error {
  constructor(message = 'not logged in: run `plaza social login` (or `plaza social register`) first') {
    super(message)
  }
}

export { UsageError }

/** The flags every list command takes; the server validates and clamps them (decisions §3). */
export const pageFlags = {
  page: Flags.integer({ description: 'page number, from 1', min: 1 }),
  limit: Flags.integer({ description: 'items per page (at most 50)', min: 1 }),
}

/** USER arguments: a username or a numeric id; procedures take either (`userRef`), a number as a number. */
export const userArg = (description = 'username or numeric id') => Args.string({ description, required: true })
export const userRef = (ref: string): number | string => (/^\d+$/.test(ref) ? Number(ref) : ref)

export abstract class PlazaCommand<T extends typeof Command> extends CliCommand {
  static enableJsonFlag = true

  static override baseFlags = {
    ...jqFlags,
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
    as: Flags.string({
      description: 'act as another account kept for this server (see `plaza social accounts`), for this command only',
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
    }).catch((error: Error) => {
      // oclif's own parse errors already exit 2; a value its type parser rejects ("abc" for an integer) is a plain Error.
      throw error instanceof Errors.CLIError ? error : new UsageError(error.message)
    })
    this.flags = flags as BaseFlags<T>
    this.args = args as BaseArgs<T>
    // An --as naming no kept account fails now (exit 4), not inside a request.
    if (this.flags.as !== undefined) this.token()
  }

  /**
   * oclif's argument parser uses its `context` (this command) as scratch space and leaves a
   * `token` property on it, which would shadow `token()` below; drop it once parsing is done.
   */
  protected override async parse<F extends Interfaces.OutputFlags<any>, B extends Interfaces.OutputFlags<any>, A extends Interfaces.OutputArgs<any>>(
    options?: Interfaces.Input<F, B, A>,
    argv?: string[],
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    try {
      return await super.parse(options, argv)
    } finally {
      if (Object.hasOwn(this, 'token')) delete (this as unknown as { token?: unknown }).token
    }
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

  /**
   * The token to send: the `--as USER` account's; else `PLAZA_TOKEN`; else the active account's for
   * this target. `--as` naming an account not kept here fails with exit 4.
   */
  protected token(): string | null {
    const as = this.flags?.as
    if (as !== undefined) {
      const session = this.sessions.get(targetKey(this.target), as)
      if (!session) throw new NeedsLoginError(`no account @${as.replace(/^@/, '')} kept for ${this.where()}: log in as that user with \`plaza social login\` (see \`plaza social accounts\`)`)
      return session.token
    }
    return process.env.PLAZA_TOKEN || this.sessions.get(targetKey(this.target))?.token || null
  }

  /** The server URL, or the embedded data directory, for messages. */
  protected where(): string {
    return this.target.kind === 'remote' ? this.target.url : this.target.dataDir
  }

  /** Keeps the session as an account of this target, and makes it the active one. */
  protected saveSession(session: StoredSession) {
    this.sessions.set(targetKey(this.target), session)
  }

  /** Forgets the kept account holding `token` (nothing when it is not kept here, e.g. PLAZA_TOKEN's); returns the account now active. */
  protected forgetSession(token: string | null) {
    if (!token) return null
    return this.sessions.remove(targetKey(this.target), token).active
  }

  /** Fails with exit 4 when there is no session at all (before any request is made). */
  protected requireLogin() {
    if (!this.token()) throw new NeedsLoginError()
  }

  /** The tRPC client, created on first use. */
  protected client(): Promise<PlazaClient> {
    this.#client ??= createPlazaClient(this.target, () => this.token(), `plaza-cli/${this.config.version}`)
    return this.#client
  }

  /** Writes human output: only when --json is off (data on stdout, nothing else). */
  protected human(text: string) {
    if (!this.jsonEnabled()) this.log(text)
  }

  /** Chatter (hints, progress) for a person watching: stderr, only on a TTY, never with --json. */
  protected chatter(text: string) {
    if (!this.jsonEnabled() && process.stderr.isTTY) process.stderr.write(text + '\n')
  }

  /**
   * Human rendering of feeds, posts, profiles and notifications: ink on a terminal, plain text when
   * stdout is a pipe or file. Ink (and React) are imported only on the terminal path, so scripted runs
   * start fast.
   */
  protected async show(view: View) {
    if (this.jsonEnabled()) return
    if (process.stdout.isTTY) {
      const { renderView } = await import('./ui/render.js')
      this.log(renderView(view, process.stdout.columns || 80))
    } else {
      const { viewText } = await import('./ui/format.js')
      this.log(viewText(view))
    }
  }

  /** Uploads a file (remote multipart, or the embedded pipeline), with a progress line on a TTY. */
  protected async upload(route: UploadRoute, file: string): Promise<UploadResult> {
    this.requireLogin()
    const [client, { uploadFile }] = await Promise.all([this.client(), import('./uploads.js')])
    const show = !this.jsonEnabled() && process.stderr.isTTY
    const name = path.basename(file)
    const progress = show
      ? (sent: number, total: number) => process.stderr.write(`\ruploading ${name} ${total ? Math.floor((sent / total) * 100) : 100}%`)
      : undefined
    try {
      return await uploadFile(client, this.token(), route, file, progress)
    } finally {
      if (show) process.stderr.write('\r\x1b[2K')
    }
  }

  protected override async catch(error: Error & { oclif?: { exit?: number } }): Promise<unknown> {
    // this.exit(n) and oclif's own help/version exits pass straight through.
    if (error instanceof Errors.ExitError) throw error
    // The right error first: without a session, a server that is not there is the problem to report, not the login.
    if (error instanceof NeedsLoginError && this.#target?.kind === 'remote') {
      const unreachable = await probe(this.#target.url)
      if (unreachable) return printError(unreachable, EXIT.error, error)
    }
    const exit = oclifExit(error) ?? exitCodeOf(error)
    const message = error instanceof Errors.CLIError ? error.message : describeFailure(error, this.#target)
    // Always stderr, even with --json: stdout holds data only (gh's habit), and no stack trace.
    return printError(message, exit, error)
  }

  protected override async finally(error: Error | undefined): Promise<unknown> {
    if (this.#client) await (await this.#client.catch(() => null))?.close()
    return super.finally(error)
  }
}

/** Null when something answers HTTP at `url`; else the one line saying it cannot be reached. */
async function probe(url: string): Promise<string | null> {
  try {
    const response = await remoteFetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) })
    await response.body?.cancel()
    return null
  } catch (error) {
    return unreachable(url, error).message
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
    if (!code && target?.kind === 'remote') {
      const status = (error.meta as { response?: { status?: number } } | undefined)?.response?.status
      // An answer that is not tRPC's: something else listens there (or a proxy answered).
      if (status || error.cause instanceof SyntaxError) return `unexpected answer from ${target.url}${status ? ` (HTTP ${status})` : ''}: is it a Plaza server?`
      return unreachable(target.url, error.cause ?? error).message
    }
    if (code === 'UNAUTHORIZED') return `${error.message} (log in with \`plaza social login\`)`
    return error.message
  }
  return (error as Error)?.message ?? String(error)
}
