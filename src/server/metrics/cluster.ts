/**
 * The whole server's figures under `plaza serve --workers N`: the worker that received a scrape
 * asks the primary, the primary asks every worker for its registry (as prom-client's JSON) over
 * the cluster's IPC channel, sums them with prom-client's `AggregatorRegistry.aggregate` (each
 * metric by its own aggregator: sums for counts, the largest database size, the mean event-loop
 * lag) and answers the worker that asked. prom-client's own cluster listeners would serve the
 * module's global registry; these serve the registry on each process's Services.
 */
import cluster, { type Worker } from 'node:cluster'
import { AggregatorRegistry } from 'prom-client'

/** One metric as prom-client's `getMetricsAsJSON` gives it. */
export interface MetricFamily {
  name: string
  help: string
  type: string
  aggregator?: string
  values: Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>
}

/** How long a scrape waits for every worker's figures before answering 503. */
const COLLECT_TIMEOUT_MS = 5_000

type Message =
  | { type: 'plaza:metrics:ask'; id: number; flush: boolean }
  | { type: 'plaza:metrics:report'; id: number; flush: boolean }
  | { type: 'plaza:metrics:reported'; id: number; metrics?: MetricFamily[]; error?: string }
  | { type: 'plaza:metrics:answer'; id: number; metrics?: MetricFamily[]; error?: string }

const isMessage = (message: unknown): message is Message => typeof (message as Message)?.type === 'string' && (message as Message).type.startsWith('plaza:metrics:')

/** Sums several processes' figures into one registry's worth. */
export async function aggregateMetrics(reports: MetricFamily[][]): Promise<MetricFamily[]> {
  return (await AggregatorRegistry.aggregate(reports).getMetricsAsJSON()) as unknown as MetricFamily[]
}

/** Renders figures in the Prometheus text format. */
export function renderMetricsText(metrics: MetricFamily[]): Promise<string> {
  return AggregatorRegistry.aggregate([metrics]).metrics()
}

/**
 * The primary's side: answers a worker's question with every live worker's figures, summed.
 * `flush` first has each worker write its call statistics, so the database holds them all.
 */
export function serveClusterMetrics(): void {
  let next = 0
  const pending = new Map<number, { reports: MetricFamily[][]; waiting: number; done: (error: string | null) => void }>()
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isMessage(message)) return
    if (message.type === 'plaza:metrics:ask') {
      const id = next++
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected())
      const answer = (reply: Omit<Extract<Message, { type: 'plaza:metrics:answer' }>, 'type' | 'id'>) => {
        if (worker.isConnected()) worker.send({ type: 'plaza:metrics:answer', id: message.id, ...reply } satisfies Message)
      }
      const reports: MetricFamily[][] = []
      const done = (error: string | null) => {
        if (!pending.delete(id)) return
        clearTimeout(timer)
        if (error) return answer({ error })
        aggregateMetrics(reports).then((metrics) => answer({ metrics }), (failure: Error) => answer({ error: failure.message }))
      }
      const timer = setTimeout(() => done('not every server worker reported its metrics in time'), COLLECT_TIMEOUT_MS)
      pending.set(id, { reports, waiting: workers.length, done })
      for (const w of workers) w.send({ type: 'plaza:metrics:report', id, flush: message.flush } satisfies Message)
    } else if (message.type === 'plaza:metrics:reported') {
      const request = pending.get(message.id)
      if (!request) return
      if (message.error || !message.metrics) return request.done(message.error ?? 'a server worker reported no metrics')
      request.reports.push(message.metrics)
      if (--request.waiting === 0) request.done(null)
    }
  })
}

export interface ClusterLink {
  /** The figures of every worker, summed by the primary. */
  collect(flush: boolean): Promise<MetricFamily[]>
  close(): void
}

/** A worker's side: reports its own figures when the primary asks, and asks the primary for everyone's. */
export function joinClusterMetrics(report: (flush: boolean) => Promise<MetricFamily[]>): ClusterLink {
  let next = 0
  const waiting = new Map<number, { resolve: (metrics: MetricFamily[]) => void; reject: (error: Error) => void }>()
  // A worker that is shutting down may have lost its channel: then there is no one to tell.
  const send = (message: Message) => void (process.connected && process.send!(message))
  const onMessage = (message: unknown) => {
    if (!isMessage(message)) return
    if (message.type === 'plaza:metrics:report') {
      report(message.flush).then(
        (metrics) => send({ type: 'plaza:metrics:reported', id: message.id, metrics }),
        (error: Error) => send({ type: 'plaza:metrics:reported', id: message.id, error: error.message }),
      )
    } else if (message.type === 'plaza:metrics:answer') {
      const request = waiting.get(message.id)
      waiting.delete(message.id)
      if (message.metrics) request?.resolve(message.metrics)
      else request?.reject(new Error(message.error ?? 'no answer'))
    }
  }
  process.on('message', onMessage)
  return {
    collect(flush) {
      const id = next++
      return new Promise((resolve, reject) => {
        if (!process.connected) return reject(new Error('the primary process is gone'))
        const timer = setTimeout(() => {
          waiting.delete(id)
          reject(new Error('the primary process did not answer in time'))
        }, COLLECT_TIMEOUT_MS * 2)
        waiting.set(id, {
          resolve: (metrics) => (clearTimeout(timer), resolve(metrics)),
          reject: (error) => (clearTimeout(timer), reject(error)),
        })
        send({ type: 'plaza:metrics:ask', id, flush })
      })
    },
    close() {
      process.off('message', onMessage)
      for (const request of waiting.values()) request.reject(new Error('the server is closing'))
      waiting.clear()
    },
  }
}
