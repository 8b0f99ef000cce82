/**
 * The base of every `plaza` command (the client commands extend it through PlazaCommand, the
 * operator commands and `serve` directly): one error format, and `--jq EXPR` wherever `--json` is.
 */
import { Command, Errors, Flags, type Interfaces } from '@oclif/core'
import { UsageError } from './client.js'
import { oclifExit, printError } from './errors.js'

/** `--jq`, for every command that answers JSON. */
export const jqFlags = {
  jq: Flags.string({
    description: 'filter the JSON answer with a jq expression (implies --json; strings print raw), e.g. ".[] | .id"',
    helpGroup: 'GLOBAL',
  }),
}

export abstract class CliCommand extends Command {
  static baseFlags: Interfaces.FlagInput = jqFlags

  #jq?: string
  /** JSON documents the command produced, kept to be filtered once it has run (jq is asynchronous, oclif's logJson is not). */
  #pending: unknown[] = []

  /** The --jq expression once flags are parsed (commands that parse in run() go through here too). */
  protected get jqFilter(): string | undefined {
    return this.#jq
  }

  protected override async parse<F extends Interfaces.OutputFlags<any>, B extends Interfaces.OutputFlags<any>, A extends Interfaces.OutputArgs<any>>(
    options?: Interfaces.Input<F, B, A>,
    argv?: string[],
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    const parsed = await super.parse(options, argv)
    const jq = (parsed.flags as { jq?: string }).jq
    if (jq !== undefined) {
      const { checkJq } = await import('./jq.js')
      await checkJq(jq)
      this.#jq = jq
    }
    return parsed
  }

  /** --jq implies --json: the human text is off and the JSON answer goes through the filter. */
  public override jsonEnabled(): boolean {
    return super.jsonEnabled() || (this.#jq !== undefined && Boolean(this.ctor?.enableJsonFlag))
  }

  public override logJson(json: unknown): void {
    if (this.#jq === undefined) return super.logJson(json)
    this.#pending.push(json)
  }

  /** One JSON document per line (for streams), through --jq when given. */
  protected async writeJsonLine(value: unknown): Promise<void> {
    if (this.#jq === undefined) return void process.stdout.write(JSON.stringify(value) + '\n')
    const { runJq } = await import('./jq.js')
    const out = await runJq(value, this.#jq, true)
    if (out) process.stdout.write(out + '\n')
  }

  protected override async _run<T>(): Promise<T> {
    const result = await super._run<T>()
    if (this.#pending.length === 0) return result
    try {
      const { runJq } = await import('./jq.js')
      for (const json of this.#pending.splice(0)) {
        const out = await runJq(json, this.#jq!)
        if (out) process.stdout.write(out + '\n')
      }
    } catch (error) {
      await this.catch(error as Error)
    }
    return result
  }

  /** Every failure: `Error: <one line>` on stderr, stdout left empty, oclif's exit code or 1. */
  protected override async catch(error: Error & { oclif?: { exit?: number } }): Promise<unknown> {
    if (error instanceof Errors.ExitError) throw error
    return printError(error.message, oclifExit(error) ?? (error instanceof UsageError ? 2 : 1), error)
  }
}
