import { Args, Flags, ux } from '@oclif/core'
import { type ApiAnswer, apiRequest, parseFields, parseHeaders, readInput, requestLine } from '../api.js'
import { NeedsLoginError, PlazaCommand, UsageError } from '../base.js'

export default class Api extends PlazaCommand<typeof Api> {
  static override description =
    'Send one request to any REST path of the server (/api/mobile/… or /api/…) with your session, and print the answer (JSON pretty-printed), as gh api does. A non-2xx answer is printed too, and exits 1 (4 for 401).'

  static override examples = [
    '<%= config.bin %> api /api/mobile/user/profile',
    '<%= config.bin %> api /api/mobile/posts/explore --jq ".data.posts[] | .id"',
    '<%= config.bin %> api POST /api/mobile/posts/create -f content="Hello #plaza" -F is_private=false',
    '<%= config.bin %> api PUT /api/mobile/user/update -f bio="Down the rabbit hole" --url http://127.0.0.1:8080',
    '<%= config.bin %> api /api/uptime --as bob',
    '<%= config.bin %> api POST /api/mobile/posts/create --input post.json -i',
  ]

  // The answer is always printed as JSON: no --json flag; --jq filters it.
  static override enableJsonFlag = false

  static override args = {
    first: Args.string({ description: 'PATH, or METHOD when PATH follows', required: true, ignoreStdin: true }),
    path: Args.string({ description: 'PATH when METHOD comes first', ignoreStdin: true }),
  }

  static override flags = {
    method: Flags.string({ char: 'X', description: 'HTTP method (default GET, or POST when fields or --input are given)' }),
    'raw-field': Flags.string({ char: 'f', description: 'a string field key=value (query for GET, JSON body otherwise); key[]=v builds a list', multiple: true }),
    field: Flags.string({
      char: 'F',
      description: 'a typed field key=value: true, false, null and integers as such, @FILE for a file\'s text (@- stdin)',
      multiple: true,
    }),
    input: Flags.string({ description: 'the request body from FILE (- for stdin), sent as is; fields then go to the query' }),
    header: Flags.string({ char: 'H', description: 'an extra request header "Name: value"', multiple: true }),
    include: Flags.boolean({ char: 'i', description: 'print the status line and the response headers before the body' }),
  }

  async run(): Promise<void> {
    const flags = this.flags
    let stdinUsed = false
    const stdin = async () => {
      if (stdinUsed) throw new UsageError('stdin can be read only once (by --input - or one -F key=@-)')
      stdinUsed = true
      return readInput(process.stdin)
    }
    const fields = await parseFields(flags['raw-field'] ?? [], flags.field ?? [], stdin)
    const hasBody = Object.keys(fields).length > 0 || flags.input !== undefined
    const { method, path } = requestLine(this.args.first, this.args.path, flags.method, hasBody)
    const headers = parseHeaders(flags.header ?? [])
    const token = this.token()
    if (token && !Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) headers.authorization = `Bearer ${token}`
    headers['user-agent'] ??= `plaza-cli/${this.config.version}`

    const input = flags.input === undefined ? undefined : flags.input === '-' ? { text: await stdin() } : { file: flags.input }
    const status = await apiRequest(this.target, { method, path, headers, fields, input }, (answer) => this.print(answer))
    if (status.ok) return
    if (status.code === 401) throw new NeedsLoginError(`HTTP 401: ${status.message ?? 'Unauthorized'} (log in with \`plaza social login\`)`)
    throw new Error(`HTTP ${status.code}${status.message ? `: ${status.message}` : ''}`)
  }

  /** Prints the answer as gh api does; returns whether it was a success, and the envelope's message if not. */
  private async print(answer: ApiAnswer): Promise<{ ok: boolean; code: number; message?: string }> {
    if (this.flags.include) {
      const lines = [`HTTP/1.1 ${answer.status} ${answer.statusText}`, ...answer.headers.map(([name, value]) => `${name}: ${value}`)]
      process.stdout.write(lines.join('\n') + '\n\n')
    }
    if (answer.json !== undefined) {
      if (this.jqFilter !== undefined) {
        const { runJq } = await import('../jq.js')
        const out = await runJq(answer.json, this.jqFilter)
        if (out) process.stdout.write(out + '\n')
      } else process.stdout.write((process.stdout.isTTY ? ux.colorizeJson(answer.json, { pretty: true }) : JSON.stringify(answer.json, null, 2)) + '\n')
    } else if (answer.stream) {
      for await (const chunk of answer.stream) process.stdout.write(chunk)
    }
    const ok = answer.status >= 200 && answer.status < 300
    const message = (answer.json as { message?: unknown } | undefined)?.message
    return { ok, code: answer.status, message: typeof message === 'string' ? message : undefined }
  }
}
