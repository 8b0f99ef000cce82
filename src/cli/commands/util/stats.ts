import { Flags } from '@oclif/core'
import { formatTable } from '../../admin.js'
import { PlazaCommand } from '../../base.js'
import { reach } from '../../client.js'
import { operationStatsAnswer, type OperationStatsAnswer } from '../../../shared/schemas/stats.js'

type Figures = OperationStatsAnswer['operations'][number]['all_time']

/** Every catalog operation's figures; `since_start` is null when embedded (no server is running here). */
export interface StatsOutput {
  operations: Array<{ method: string; path: string; since_start: Figures | null; all_time: Figures }>
}

export default class UtilStats extends PlazaCommand<typeof UtilStats> {
  static override description =
    "Calls, errors (5xx), client errors (4xx), mean and p95 latency of every catalog operation, since the server started and all-time. Embedded, the local database's all-time figures (a running server adds its latest calls within 10 s)."
  static override examples = [
    '<%= config.bin %> util stats --url http://127.0.0.1:8080',
    'PLAZA_METRICS_TOKEN=... <%= config.bin %> util stats --url https://plaza.example.com --json',
    '<%= config.bin %> util stats --data-dir /var/lib/plaza',
  ]
  static override flags = {
    'metrics-token': Flags.string({ description: "the server's PLAZA_METRICS_TOKEN, when it has one (prefer the variable: a flag shows in the process list)", env: 'PLAZA_METRICS_TOKEN' }),
  }

  async run(): Promise<StatsOutput> {
    const stats = this.target.kind === 'remote' ? await fetchStats(this.target.url, this.flags['metrics-token']) : await this.readLocalStats()
    this.human(statsTable(stats))
    return stats
  }

  /** The all-time figures in the local database, for every offered operation. */
  private async readLocalStats(): Promise<StatsOutput> {
    const [client, { catalog, isOffered }, { operationKey, readOperationStats, summarise }, { BUCKET_COUNT }] = await Promise.all([
      this.client(),
      import('../../../server/catalog/registry.js'),
      import('../../../server/metrics/operation-stats.js'),
      import('../../../server/metrics/latency.js'),
    ])
    const stored = await readOperationStats(client.services!.db)
    const none = { calls: new Array(BUCKET_COUNT).fill(0), errors: 0, clientErrors: 0, totalMs: 0 }
    return {
      operations: catalog.filter(isOffered).map(({ method, path }) => ({
        method,
        path,
        since_start: null,
        all_time: summarise(stored.get(operationKey(method, path)) ?? none),
      })),
    }
  }
}

async function fetchStats(url: string, token: string | undefined): Promise<StatsOutput> {
  const response = await reach(url, `${url}/api/stats`, { headers: token ? { authorization: `Bearer ${token}` } : {} })
  const body = (response.headers.get('content-type') ?? '').includes('json') ? await response.json().catch(() => null) : null
  if (!response.ok) {
    const message = (body as { message?: string } | null)?.message ?? `unexpected answer from ${url} (HTTP ${response.status}): is it a Plaza server?`
    throw new Error(response.status === 401 ? `${message} (set PLAZA_METRICS_TOKEN or pass --metrics-token)` : message)
  }
  const parsed = operationStatsAnswer.safeParse(body)
  if (!parsed.success) throw new Error(`unexpected answer from ${url}: is it a Plaza server?`)
  return { operations: parsed.data.operations }
}

const figure = (value: number | null) => (value === null ? '-' : String(value))

function statsTable({ operations }: StatsOutput): string {
  const span = (f: Figures | null) => (f ? [String(f.calls), String(f.errors), String(f.client_errors), figure(f.mean_ms), figure(f.p95_ms)] : ['-', '-', '-', '-', '-'])
  const rows = operations.map((op) => [op.method, op.path, ...span(op.since_start), ...span(op.all_time)])
  return formatTable(['METHOD', 'PATH', 'CALLS', '5XX', '4XX', 'MEAN MS', 'P95 MS', 'ALL CALLS', 'ALL 5XX', 'ALL 4XX', 'ALL MEAN', 'ALL P95'], rows)
}
