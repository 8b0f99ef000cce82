/**
 * Every REST path Plaza serves, read from the route tables (and the tRPC procedures they name)
 * into one flat description per method and path: what the OpenAPI document is written from.
 */
import { z } from 'zod'
import { errorCases, errorFormatOf, type ErrorCases, type ErrorFormat } from '../../errors.js'
import type { AnswerKind, HandlerAuth, Method, Route } from '../../rest/adapter.js'
import { mobileRoutes } from '../../rest/mobile.js'
import { rootRoutes, utilityRoutes } from '../../rest/utility.js'
import { appRouter } from '../../router.js'
import type { Meta } from '../../trpc.js'

export interface Endpoint {
  method: Method
  /** The full path in OpenAPI's `{name}` syntax. */
  path: string
  /**
   * The path's `{name}` segments, in order: the name in the document, and the input field it fills.
   * They differ only where two paths would otherwise be one template (see `mergeTemplates`).
   */
  pathParams: Array<{ name: string; field: string }>
  /** Input fields the route takes from its path only, an optional last segment's included (never query or body fields). */
  pathFields: string[]
  operationId: string
  summary?: string
  tag: string
  /** Whether the operation takes a token, and which (`scheme`): none, one it answers without, or one it needs. */
  auth: 'none' | 'optional' | 'required'
  scheme: TokenScheme
  /** The zod schema the input is validated with; its path fields are path parameters, the rest go to `inputIn`. */
  input?: z.ZodType
  inputIn: 'query' | 'body'
  /** The form field carrying the file of a multipart upload. */
  multipart?: string
  status: number
  answers: AnswerKind
  /** True when a success is the envelope with `output` as its `data` (/api/mobile, /health); else `output` is the whole body. */
  enveloped: boolean
  output?: z.ZodType
  /** Error bodies: the envelope, OpenAI's `{error}` or Anthropic's (errorFormatOf: what each API's clients expect). */
  errorFormat: ErrorFormat
  rateLimited: boolean
  /** Error statuses beyond those the endpoint's shape implies, with when (the procedure's and the route's). */
  errors: ErrorCases
}

/** The tokens Plaza takes: a session's, a chat gateway key, the metrics token (security schemes of the document). */
export type TokenScheme = 'bearerAuth' | 'gatewayKey' | 'metricsToken'

/** A handler route's token as the document describes it. */
const HANDLER_AUTH: Record<HandlerAuth, { auth: Endpoint['auth']; scheme: TokenScheme }> = {
  bearer: { auth: 'required', scheme: 'bearerAuth' },
  // Anyone until the operator creates the first key; the document cannot know, so the key is optional.
  'gateway-key': { auth: 'optional', scheme: 'gatewayKey' },
  'premium-key': { auth: 'required', scheme: 'gatewayKey' },
  'metrics-token': { auth: 'optional', scheme: 'metricsToken' },
}

interface ProcedureDef {
  _def: { inputs: z.ZodType[]; meta?: Meta }
}

function procedureOf(name: string): ProcedureDef {
  // Typed as the nested router shape, but at run time a flat record keyed by dotted path.
  const procedure = (appRouter._def.procedures as unknown as Record<string, ProcedureDef | undefined>)[name]
  if (!procedure) throw new Error(`route table names an unknown procedure: ${name}`)
  if (procedure._def.inputs.length > 1) throw new Error(`${name} chains several .input() parsers; the OpenAPI document reads one`)
  return procedure
}

const camel = (words: string[]) =>
  words
    .map((word, i) => (i === 0 ? word : word.charAt(0).toUpperCase() + word.slice(1)))
    .join('')

/** `reasoning-70b` → ['reasoning', '70b']: path segments as identifier words. */
const wordsOf = (text: string) => text.split(/[^A-Za-z0-9]+/).filter(Boolean)

interface Mount {
  prefix: '' | '/api' | '/api/mobile'
  routes: Route[]
}

/**
 * One endpoint per route, two for a route whose last segment is optional (`/user/profile/:user_id?`
 * is `/user/profile` and `/user/profile/{user_id}`: OpenAPI path parameters are always required).
 */
function endpointsOf({ prefix, routes }: Mount): Endpoint[] {
  return routes.flatMap((route) => {
    const segments = route.path.split('/').filter(Boolean)
    const optional = /^:\w+\?$/.test(segments.at(-1) ?? '')
    const variants = optional ? [segments.slice(0, -1), segments] : [segments]
    const paramName = (part: string) => part.replace(/^:|\?$/g, '')
    const pathFields = segments.filter((part) => part.startsWith(':')).map(paramName)
    return variants.map((parts) => {
      const params = parts.filter((part) => part.startsWith(':')).map(paramName)
      const path = prefix + '/' + parts.map((part) => (part.startsWith(':') ? `{${paramName(part)}}` : part)).join('/')
      const fixed = segments.filter((part) => !part.startsWith(':'))
      const base = ('procedure' in route ? camel(route.procedure.split('.')) : camel(fixed.flatMap(wordsOf))) || 'root'
      // A procedure's name tells its routes apart; a handler route's fixed words may not (`/v1/models`, `/v1/models/:id`).
      const byParams = (optional && parts.length === segments.length) || (!('procedure' in route) && params.length > 0)
      const operationId = byParams ? camel([base, 'by', ...params.flatMap((name) => wordsOf(name))]) : base
      const bodyless = route.method === 'GET' || (route.method === 'DELETE' && !('deleteWithBody' in route && route.deleteWithBody))
      const common = {
        method: route.method,
        path,
        pathParams: params.map((name) => ({ name, field: name })),
        pathFields,
        operationId,
        summary: route.summary,
        tag: route.tag ?? fixed[0] ?? 'root',
        inputIn: bodyless ? ('query' as const) : ('body' as const),
        enveloped: prefix === '/api/mobile',
        output: route.output,
        errorFormat: errorFormatOf(path),
      }
      if ('procedure' in route) {
        const procedure = procedureOf(route.procedure)
        const { auth = 'none', errors } = procedure._def.meta ?? {}
        return {
          ...common,
          auth,
          scheme: 'bearerAuth' as const,
          input: procedure._def.inputs[0],
          status: route.status ?? 200,
          answers: 'json' as const,
          rateLimited: true,
          errors: errorCases(errors, route.errors),
        }
      }
      return {
        ...common,
        ...(route.auth ? HANDLER_AUTH[route.auth] : { auth: 'none' as const, scheme: 'bearerAuth' as const }),
        errors: route.errors ?? {},
        input: route.request,
        multipart: route.multipart,
        status: route.status ?? 200,
        answers: route.answers ?? 'json',
        // The system group (the document, the reference page, metrics) is there to be read freely.
        rateLimited: route.tag !== 'system',
      }
    })
  })
}

/** `/health` is answered by app.ts itself, ahead of the route tables. */
const health: Endpoint = {
  method: 'GET',
  path: '/health',
  pathParams: [],
  pathFields: [],
  operationId: 'health',
  summary: 'Liveness: answers 200 while the server is serving',
  tag: 'system',
  auth: 'none',
  scheme: 'bearerAuth',
  inputIn: 'query',
  status: 200,
  answers: 'json',
  enveloped: true,
  output: z.object({ status: z.literal('ok') }),
  errorFormat: 'envelope',
  rateLimited: false,
  errors: {},
}

/** Operation ids shared by several methods of one path (GET and POST /api/chat) get the method appended. */
function disambiguate(endpoints: Endpoint[]): Endpoint[] {
  const countIds = (list: Endpoint[]) => {
    const counts = new Map<string, number>()
    for (const { operationId } of list) counts.set(operationId, (counts.get(operationId) ?? 0) + 1)
    return counts
  }
  const first = countIds(endpoints)
  const byMethod = endpoints.map((endpoint) => (first.get(endpoint.operationId)! > 1 ? { ...endpoint, operationId: camel([endpoint.operationId, endpoint.method.toLowerCase()]) } : endpoint))
  // One name and method on two mounts (`GET /api/metrics` as JSON, `GET /metrics` as text): told apart by what they answer.
  const second = countIds(byMethod)
  return byMethod.map((endpoint, i) => (second.get(endpoint.operationId)! > 1 ? { ...endpoint, operationId: camel([endpoints[i].operationId, endpoint.answers]) } : endpoint))
}

/** The path as OpenAPI compares templates: `/comment/{post_id}` and `/comment/{comment_id}` are both `/comment/{}`. */
const templateOf = (path: string) => path.replace(/\{[^}]+\}/g, '{}')

/**
 * Paths that differ only in a parameter's name are one path to OpenAPI (`POST /comment/:post_id` and
 * `DELETE /comment/:comment_id`): where the names differ, the document names the segment `id`
 * (`id2`, ... past the first such segment) and each operation's parameter says which id it is. The
 * URLs the server answers are unchanged.
 */
function mergeTemplates(endpoints: Endpoint[]): Endpoint[] {
  const byTemplate = new Map<string, Endpoint[]>()
  for (const endpoint of endpoints) byTemplate.set(templateOf(endpoint.path), [...(byTemplate.get(templateOf(endpoint.path)) ?? []), endpoint])
  const renamed = new Map<Endpoint, Endpoint>()
  for (const [template, group] of byTemplate) {
    if (new Set(group.map((endpoint) => endpoint.path)).size < 2) continue
    const differing = group[0].pathParams.map((_, i) => new Set(group.map((endpoint) => endpoint.pathParams[i].field)).size > 1)
    let n = 0
    const names = differing.map((differs, i) => (differs ? (n++ === 0 ? 'id' : `id${n}`) : group[0].pathParams[i].name))
    let next = 0
    const path = template.replace(/\{\}/g, () => `{${names[next++]}}`)
    for (const endpoint of group) renamed.set(endpoint, { ...endpoint, path, pathParams: endpoint.pathParams.map((param, i) => ({ ...param, name: names[i] })) })
  }
  return endpoints.map((endpoint) => renamed.get(endpoint) ?? endpoint)
}

/** Every endpoint, in the order the server matches them. */
export function listEndpoints(): Endpoint[] {
  const mounts: Mount[] = [
    { prefix: '/api/mobile', routes: mobileRoutes },
    { prefix: '/api', routes: utilityRoutes },
    { prefix: '', routes: rootRoutes },
  ]
  return mergeTemplates(disambiguate([health, ...mounts.flatMap(endpointsOf)]))
}
