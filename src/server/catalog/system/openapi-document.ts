/**
 * The OpenAPI 3.1 document of every REST path, written from the endpoints of the route tables
 * (endpoints.ts) and the zod schemas that validate their requests and describe their answers.
 * Nothing here names a path: a route added to a table appears in the document by itself.
 */
import { createRequire } from 'node:module'
import { GATEWAY_KEY_ERRORS } from '../../chat/errors.js'
import { DATA_ERRORS, errorCases, type ErrorCases } from '../../errors.js'
import type { Endpoint, TokenScheme } from './endpoints.js'
import { exampleOf } from './examples.js'
import { createSchemaCollector, type JsonSchema, type SchemaCollector } from './json-schema.js'
import { TAG_DESCRIPTIONS } from './tags.js'

export type OpenApiDocument = JsonSchema & { paths: Record<string, Record<string, JsonSchema>> }

/** The same from src/ (tests) and dist/ (the package): four folders below the package root. */
const { version, license } = createRequire(import.meta.url)('../../../../package.json') as { version: string; license: string }

const ref = (kind: 'schemas' | 'responses' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` })

/** The tokens, as security schemes (all HTTP bearer tokens; which one an operation takes is its `security`). */
const SECURITY_SCHEMES: Record<TokenScheme, JsonSchema> = {
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'The `token` of a session (register, login or refresh answer one)' },
  gatewayKey: {
    type: 'http',
    scheme: 'bearer',
    description: 'A key of the chat gateway (`plaza admin keys create`): needed by the gateway\'s operations once the operator has created any key',
  },
  metricsToken: { type: 'http', scheme: 'bearer', description: 'The token the server was given in `PLAZA_METRICS_TOKEN`: needed for the metrics when one is set' },
}

/**
 * The errors many operations share, by status: the name of their component and when they happen.
 * An operation that answers one for a reason of its own says so in its own response object.
 */
const SHARED_ERRORS: Record<number, [name: string, description: string]> = {
  400: ['BadRequest', 'The request is not valid: a field fails validation (the message names it), or the JSON or path is malformed'],
  401: ['Unauthorized', 'No bearer token, or an invalid or expired one'],
  403: ['Forbidden', 'Not allowed: the account is suspended, or the item belongs to someone else'],
  404: ['NotFound', 'Nothing with that id (or nothing the caller may see)'],
  405: ['MethodNotAllowed', 'The path does not serve that method; `Allow` lists the ones it does'],
  408: ['RequestTimeout', 'The request (its headers, or its body) did not arrive in time; the connection is closed'],
  413: ['PayloadTooLarge', 'The request body is larger than the operation accepts'],
  429: ['TooManyRequests', 'Past the rate limit; `Retry-After` says when to come back'],
  431: ['HeadersTooLarge', "The request's URL and headers are larger than the server reads (16 KiB); the connection is closed"],
  500: ['InternalError', 'An unexpected failure (a bug; the details are in the server log only)'],
  503: ['ServiceUnavailable', 'The server is restarting after an update (this process failed to load part of its code); `Retry-After` says when to try again'],
}

/** Headers some error answers carry. */
const ERROR_HEADERS: Record<number, Record<string, JsonSchema>> = {
  405: { Allow: ref('headers', 'Allow') },
  429: { 'Retry-After': ref('headers', 'RetryAfter'), RateLimit: ref('headers', 'RateLimit'), 'RateLimit-Policy': ref('headers', 'RateLimitPolicy') },
  503: { 'Retry-After': ref('headers', 'RetryAfter') },
}

const HEADERS: Record<string, JsonSchema> = {
  RetryAfter: { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } },
  Allow: { description: 'The methods the path serves', schema: { type: 'string' } },
  RateLimit: {
    description:
      'What is left of each rate limit the request was counted in (IETF draft-ietf-httpapi-ratelimit-headers, a structured-field List): one item per class, `"CLASS";r=UNITS_LEFT;t=SECONDS_TO_WINDOW_END`, e.g. `"auth";r=4;t=42`. Absent when the server runs without rate limits.',
    schema: { type: 'string' },
  },
  RateLimitPolicy: {
    description: 'The quota of each of those classes: `"CLASS";q=QUOTA;w=WINDOW_SECONDS`, e.g. `"auth";q=5;w=60`.',
    schema: { type: 'string' },
  },
}

/** What every answer of an operation counted against a rate limit carries (rate-limit-headers.ts). */
const RATE_LIMIT_HEADERS = { RateLimit: ref('headers', 'RateLimit'), 'RateLimit-Policy': ref('headers', 'RateLimitPolicy') }

/** Refusals made before the request is routed (while its headers or body arrive): in the envelope on every path. */
const BEFORE_ROUTING = new Set([408, 431])

/** The schema of each error format's body. */
const ERROR_SCHEMAS: Record<Endpoint['errorFormat'], string> = { envelope: 'ErrorEnvelope', openai: 'OpenAIError', anthropic: 'AnthropicError' }

/** The prefix of a shared error component's name in each format. */
const ERROR_PREFIXES: Record<Endpoint['errorFormat'], string> = { envelope: '', openai: 'OpenAI', anthropic: 'Anthropic' }

/** An error answer's content: the envelope, OpenAI's shape or Anthropic's. */
const errorContent = (format: Endpoint['errorFormat']) => ({ 'application/json': { schema: ref('schemas', ERROR_SCHEMAS[format]) } })

/** The error component of a shared status in a format, added to `used` (only referenced components are written). */
function sharedError(status: number, format: Endpoint['errorFormat'], used: Record<string, JsonSchema>): JsonSchema {
  const [base, description] = SHARED_ERRORS[status]
  const shape = BEFORE_ROUTING.has(status) ? 'envelope' : format
  const name = `${ERROR_PREFIXES[shape]}${base}`
  used[name] ??= { description, ...(ERROR_HEADERS[status] && { headers: ERROR_HEADERS[status] }), content: errorContent(shape) }
  return ref('responses', name)
}

/** What an operation's token answers when missing, wrong or not allowed, by scheme. */
function tokenErrors(endpoint: Endpoint): { shared: number[]; own: ErrorCases } {
  if (endpoint.auth === 'none') return { shared: [], own: {} }
  switch (endpoint.scheme) {
    case 'bearerAuth':
      // An optional token, when sent, must be valid: a wrong one is a 401 even where none is needed.
      return endpoint.auth === 'required' ? { shared: [401, 403], own: {} } : { shared: [403], own: { 401: 'An invalid or expired token (without one, the operation answers as for anyone)' } }
    case 'gatewayKey':
      return { shared: [], own: GATEWAY_KEY_ERRORS }
    case 'metricsToken':
      return { shared: [], own: { 401: 'The server was given PLAZA_METRICS_TOKEN, and the request does not carry it' } }
  }
}

/**
 * Every error an endpoint can answer, by status: the shared ones its shape implies (a body can be
 * malformed or too large, a path names something, a rate limit applies, a token is needed) and its
 * own (the procedure's or route's `errors`, ErrorCases in errors.ts), each a component or, when it
 * has whens of its own, a response object that lists them.
 */
function errorResponses(endpoint: Endpoint, used: Record<string, JsonSchema>): Record<string, JsonSchema> {
  // Every method but GET and a plain DELETE reads a body, which can be malformed or too large.
  const readsBody = endpoint.inputIn === 'body'
  // Any request can arrive too slowly or with too large headers, fail unexpectedly, or meet a process being replaced.
  const shared = new Set([405, 408, 431, 500, 503])
  if (endpoint.input || readsBody || endpoint.pathParams.length > 0) shared.add(400)
  if (endpoint.pathParams.length > 0) shared.add(404)
  if (readsBody) shared.add(413)
  if (endpoint.rateLimited) shared.add(429)
  const token = tokenErrors(endpoint)
  for (const status of token.shared) shared.add(status)
  // Counting a request against its rate limit, or reading a session, reaches the database.
  const reachesData = endpoint.rateLimited || endpoint.auth !== 'none'
  const own = errorCases(token.own, reachesData ? DATA_ERRORS : undefined, endpoint.errors)
  const statuses = [...new Set([...shared, ...Object.keys(own).map(Number)])].sort((a, b) => a - b)
  const responses: Record<string, JsonSchema> = {}
  for (const status of statuses) {
    const whens = own[status]?.split('\n')
    if (!whens) {
      responses[status] = sharedError(status, endpoint.errorFormat, used)
      continue
    }
    const lines = [...(shared.has(status) ? [SHARED_ERRORS[status][1]] : []), ...whens]
    responses[status] = {
      description: lines.length === 1 ? lines[0] : lines.map((line) => `- ${line}`).join('\n'),
      ...(ERROR_HEADERS[status] && { headers: ERROR_HEADERS[status] }),
      // A 304 (the only answer below 400 an operation declares this way) has no body. A page's own
      // refusals are pages too (a mailed link that no longer works), its shared ones the envelope.
      ...(status >= 400 && {
        content: { ...errorContent(endpoint.errorFormat), ...(endpoint.answers === 'page' && endpoint.errors?.[status] && { 'text/html': { schema: { type: 'string' } } }) },
      }),
    }
  }
  return responses
}

/** The envelope of decisions §2 and OpenAI's error shape (/api/v1). */
const BASE_SCHEMAS: Record<string, JsonSchema> = {
  Envelope: {
    type: 'object',
    description: 'Every /api/mobile answer: `data` holds the operation\'s result',
    properties: {
      status: { type: 'string', const: 'success' },
      message: { type: 'string', description: 'A human-readable result message' },
      data: { description: 'The result; its shape depends on the operation' },
      timestamp: { type: 'integer', description: 'Unix seconds' },
    },
    required: ['status', 'message', 'data', 'timestamp'],
  },
  ErrorEnvelope: {
    type: 'object',
    description: 'An error answer: `message` says what went wrong',
    properties: {
      status: { type: 'string', const: 'error' },
      message: { type: 'string' },
      data: { type: 'null' },
      timestamp: { type: 'integer', description: 'Unix seconds' },
    },
    required: ['status', 'message', 'data', 'timestamp'],
  },
  OpenAIError: {
    type: 'object',
    description: "OpenAI's error shape, so that OpenAI's client libraries read it",
    properties: {
      error: {
        type: 'object',
        properties: { message: { type: 'string' }, type: { type: 'string' }, code: { type: ['string', 'null'] }, param: { type: ['string', 'null'] } },
        required: ['message', 'type'],
      },
    },
    required: ['error'],
  },
  AnthropicError: {
    type: 'object',
    description: "Anthropic's error shape (its Messages API, `/api/v1/messages`), so that Anthropic's client libraries read it",
    properties: {
      type: { const: 'error' },
      error: {
        type: 'object',
        properties: { type: { type: 'string', description: '`invalid_request_error`, `authentication_error`, `not_found_error`, `rate_limit_error`, `overloaded_error`, `api_error`, ...' }, message: { type: 'string' } },
        required: ['type', 'message'],
      },
    },
    required: ['type', 'error'],
  },
  Redirect: {
    type: 'object',
    description: 'The body of a redirect: where it goes, as the `Location` header says',
    properties: { message: { type: 'string' }, location: { type: 'string' } },
    required: ['message', 'location'],
  },
  StoredFile: {
    type: 'object',
    description: 'With `Accept: application/json`: the generated file, stored under `uploads/`, instead of its bytes',
    properties: { message: { type: 'string' }, url: { type: 'string', description: 'Absolute address of the file' }, path: { type: 'string', description: '`uploads/...`' } },
    required: ['message', 'url', 'path'],
  },
}

/** What every JSON body of the social API says about the fields it does not list. */
const SOCIAL_BODY =
  'Fields not listed are ignored (apps of other versions send them), except ids (`id`, `…_id`), which are refused with 400: an id goes in the path of the route that acts on it'

const binary = (mediaType: string) => ({ type: 'string', contentMediaType: mediaType })

/** The input's object schema (following a named component), or null when it is not an object. */
function objectOf(schema: JsonSchema, schemas: SchemaCollector): { properties: Record<string, JsonSchema>; required: string[] } | null {
  const target = schemas.resolve(schema)
  if (target.type !== 'object' && !target.properties) return null
  return { properties: (target.properties ?? {}) as Record<string, JsonSchema>, required: (target.required ?? []) as string[] }
}

/** Path parameters, query parameters and the request body of one endpoint. */
function requestOf(endpoint: Endpoint, schemas: SchemaCollector): { parameters: JsonSchema[]; requestBody?: JsonSchema } {
  const input = endpoint.input && schemas.toSchema(endpoint.input, 'input')
  const object = input ? objectOf(input, schemas) : null
  // Each parameter and the body carry the operation's example (examples.ts), where it has one.
  const example = (field: string, schema: JsonSchema, required: boolean) => {
    const value = exampleOf(endpoint.operationId, field, schemas.resolve(schema), required)
    return value === undefined ? {} : { example: value }
  }
  const parameters: JsonSchema[] = endpoint.pathParams.map(({ name, field }) => {
    const schema = object?.properties[field] ?? { type: 'string' }
    // A segment the document renamed (two paths would be one template) says which id it carries.
    const renamed = name !== field && { description: `The \`${field}\` (the path's other operations take another id in this segment)` }
    return { name, in: 'path', required: true, ...renamed, schema, ...example(field, schema, true) }
  })
  const rest = Object.entries(object?.properties ?? {}).filter(([name]) => !endpoint.pathFields.includes(name))
  const required = (object?.required ?? []).filter((name) => !endpoint.pathFields.includes(name))
  const queryParameters = () => rest.map(([name, schema]) => ({ name, in: 'query', required: required.includes(name), schema, ...example(name, schema, required.includes(name)) }))
  if (endpoint.multipart) {
    // The file is the form; what else the operation takes (an effect, a ratio) is in the query.
    parameters.push(...queryParameters())
    const form = { type: 'object', properties: { [endpoint.multipart]: { ...binary('application/octet-stream'), format: 'binary' } }, required: [endpoint.multipart] }
    return { parameters, requestBody: { required: true, content: { 'multipart/form-data': { schema: form } } } }
  }
  if (endpoint.inputIn === 'query') {
    if (input && !object) throw new Error(`${endpoint.method} ${endpoint.path}: a query input must be an object schema`)
    parameters.push(...queryParameters())
    return { parameters }
  }
  if (!input || (object && rest.length === 0)) return { parameters }
  // A named body keeps its component unless path fields have to come out of it.
  const whole = object && rest.length < Object.keys(object.properties).length ? { ...schemas.resolve(input), properties: Object.fromEntries(rest), required } : input
  if (Array.isArray(whole.required) && whole.required.length === 0) delete whole.required
  // The social API's bodies: an unknown field is ignored, but not an id (rest/adapter.ts, refuseIds).
  const schema = endpoint.enveloped ? { ...whole, description: [whole.description, SOCIAL_BODY].filter(Boolean).join('. ') } : whole
  const body = Object.fromEntries(rest.flatMap(([name, field]) => Object.entries(example(name, field, required.includes(name))).map(([, value]) => [name, value])))
  const media = { schema, ...(Object.keys(body).length > 0 && { example: body }) }
  return { parameters, requestBody: { required: required.length > 0, content: { 'application/json': media } } }
}

/** The success answer's content, by what the endpoint answers. */
function successOf(endpoint: Endpoint, schemas: SchemaCollector): JsonSchema {
  const data = endpoint.output ? schemas.toSchema(endpoint.output, 'output') : undefined
  const json = endpoint.enveloped
    ? data
      ? { allOf: [ref('schemas', 'Envelope'), { type: 'object', properties: { data }, required: ['data'] }] }
      : ref('schemas', 'Envelope')
    : (data ?? { type: 'object' })
  const storedOrBytes = (range: string, what: string) => ({
    description: `The ${what} bytes (\`${range}\`), or with \`Accept: application/json\` the stored file`,
    content: { [range]: { schema: binary(range) }, 'application/json': { schema: ref('schemas', 'StoredFile') } },
  })
  switch (endpoint.answers) {
    case 'image':
      return storedOrBytes('image/*', 'image')
    case 'audio':
      return storedOrBytes('audio/*', 'audio')
    case 'text':
      return { description: 'Plain text', content: { 'text/plain': { schema: { type: 'string' } } } }
    case 'page':
      return endpoint.pathParams.length === 0
        ? { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } }
        : { description: 'A file of the page (its script)', content: { 'text/javascript': { schema: { type: 'string' } } } }
    case 'event-stream':
      return { description: 'Server-Sent Events until the client leaves', content: { 'text/event-stream': { schema: { type: 'string' } } } }
    case 'redirect':
      return {
        description: 'A redirect; the body says where too',
        headers: { Location: { description: 'Where to go', schema: { type: 'string' } } },
        content: { 'application/json': { schema: ref('schemas', 'Redirect') } },
      }
    case 'json': {
      // An operation whose input has a `stream` flag answers Server-Sent Events when it is set (the chat operations).
      const input = endpoint.input && objectOf(schemas.toSchema(endpoint.input, 'input'), schemas)
      const stream = input?.properties.stream ? { 'text/event-stream': { schema: { type: 'string', description: 'With `stream: true`: chunks as Server-Sent Events, ending with `data: [DONE]`' } } } : {}
      // A `response_format` that can name a text format (OpenAI's transcriptions: text, srt, vtt) answers plain text then.
      const formats = (input?.properties.response_format as JsonSchema | undefined)?.enum
      const text = Array.isArray(formats) && formats.includes('text') ? { 'text/plain': { schema: { type: 'string', description: `With \`response_format\` ${formats.filter((f) => !String(f).includes('json')).join(', ')}` } } } : {}
      return { description: endpoint.enveloped ? 'The envelope, with the result in `data`' : 'The result', content: { 'application/json': { schema: json }, ...stream, ...text } }
    }
  }
}

function operationOf(endpoint: Endpoint, schemas: SchemaCollector, used: Record<string, JsonSchema>): JsonSchema {
  const { parameters, requestBody } = requestOf(endpoint, schemas)
  const success = successOf(endpoint, schemas)
  const counted = endpoint.rateLimited ? { ...success, headers: { ...(success.headers as Record<string, JsonSchema> | undefined), ...RATE_LIMIT_HEADERS } } : success
  const responses: Record<string, JsonSchema> = { [endpoint.answers === 'redirect' ? 302 : endpoint.status]: counted, ...errorResponses(endpoint, used) }
  const token = [{ [endpoint.scheme]: [] }]
  return {
    operationId: endpoint.operationId,
    ...(endpoint.summary && { summary: endpoint.summary }),
    tags: [endpoint.tag],
    // None: anyone may call it. Optional: without a token the operation answers as for anyone; with one, for that user or key.
    security: endpoint.auth === 'none' ? [] : endpoint.auth === 'optional' ? [{}, ...token] : token,
    ...(parameters.length > 0 && { parameters }),
    ...(requestBody && { requestBody }),
    responses,
  }
}

/** The document for `endpoints`; `servers` is left to the answer, which knows the request's origin. */
export function buildOpenApiDocument(endpoints: Endpoint[]): OpenApiDocument {
  const schemas = createSchemaCollector()
  const paths: OpenApiDocument['paths'] = {}
  const responses: Record<string, JsonSchema> = {}
  for (const endpoint of endpoints) {
    paths[endpoint.path] ??= {}
    paths[endpoint.path][endpoint.method.toLowerCase()] = operationOf(endpoint, schemas, responses)
  }
  const schemes = new Set(endpoints.filter((endpoint) => endpoint.auth !== 'none').map((endpoint) => endpoint.scheme))
  return {
    openapi: '3.1.0',
    info: {
      title: 'Plaza',
      version,
      description:
        'The social API (`/api/mobile`, answers in the envelope `{status, message, data, timestamp}`), the utility catalog (`/api`) and the server\'s own paths, generated from the route tables and the zod schemas that validate each request. Every error status an operation can answer is listed with it.',
      license: { name: license, identifier: license },
    },
    tags: [...new Set(endpoints.map((endpoint) => endpoint.tag))].map((name) => ({ name, ...(TAG_DESCRIPTIONS[name] && { description: TAG_DESCRIPTIONS[name] }) })),
    paths,
    components: {
      schemas: { ...BASE_SCHEMAS, ...schemas.components },
      responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b))),
      headers: HEADERS,
      securitySchemes: Object.fromEntries(Object.entries(SECURITY_SCHEMES).filter(([name]) => schemes.has(name as TokenScheme))),
    },
  }
}
