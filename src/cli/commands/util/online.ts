import { Args, Flags } from '@oclif/core'
import type { OnlineAnswer } from '../../../shared/schemas/searchops.js'
import { PlazaCommand } from '../../base.js'

export default class UtilOnline extends PlazaCommand<typeof UtilOnline> {
  static override description = `Latest information online: a web search, then a model answers citing the results as [1]..[N] (GET /api/online; docs/search.md).

Without --url, the search provider (PLAZA_SEARCH_BASE_URL, SearXNG's JSON API) and the chat gateway (PLAZA_LLM_*) of this environment; with --url, the server's, sending PLAZA_GATEWAY_KEY as its key when its gateway requires one.`
  static override examples = [
    '<%= config.bin %> util online "What did the last Node.js release change?"',
    '<%= config.bin %> util online "euro area inflation" --limit 3 --model gpt',
    '<%= config.bin %> util online "solar eclipse 2026" --json --url http://127.0.0.1:8080',
  ]
  static override args = {
    query: Args.string({ description: 'the question, searched on the web as it is', required: true }),
  }
  static override flags = {
    model: Flags.string({ char: 'm', description: 'a chat model name the gateway serves (default: the online alias)' }),
    limit: Flags.string({ char: 'n', description: 'how many search results the answer may cite, 1 to 10 (default 5)' }),
  }

  async run(): Promise<OnlineAnswer> {
    const { formatOnline, runOnline } = await import('../../searchops.js')
    const answer = await runOnline(this.target, { q: this.args.query, model: this.flags.model, limit: this.flags.limit })
    this.human(formatOnline(answer))
    return answer
  }
}
