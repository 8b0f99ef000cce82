/**
 * The OpenAPI 3.1 document of every REST path, written from the endpoints of the route tables
 * (endpoints.ts) and the zod schemas that validate their requests and describe their answers.
 * Nothing here names a path: a route added to a table appears in the document by itself.
 */
import { createRequire } from 'node:module'
import type { Endpoint } from './endpoints.js'
import { createSchemaCollector, type JsonSchema, type SchemaCollector } from './json-schema.js'

export type OpenApiDocument = JsonSchema & { paths: Record<string, Record<string, JsonSchema>> }

/** The same from src/ (tests) and dist/ (the package): four folders below the package root. */
const { version } = createRequire(import.meta.url)('../../../../package.json') as { version: string }

const ref = (kind: 'schemas' | 'responses' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` })

const SECURITY_SCHEME = 'bearerAuth'

/** The error answers, by status: the name of their component and when they happen. */
const ERRORS: Record<number, [name: string, description: string]> = {
  400: ['BadRequest', 'The request is not valid: a field fails validation (the message names it), or the JSON or path is malformed'],
  401: ['Unauthorized', 'No bearer token, or an invalid or expired one'],
  403: ['Forbidden', 'Not allowed: the account is suspended, or the item belongs to someone else'],
  404: ['NotFound', 'Nothing with that id (or nothing the caller may see)'],
  405: ['MethodNotAllowed', 'The path does not serve that method; `Allow` lists the ones it does'],
  413: ['PayloadTooLarge', 'The request body is larger than the operation accepts'],
  429: ['TooManyRequests', 'Past the rate limit; `Retry-After` says when to come back'],
  500: ['InternalError', 'An unexpected failure (a bug; the details are in the server log only)'],
}

function errorComponents(): { responses: Record<string, JsonSchema>; headers: Record<string, JsonSchema> } {
  const responses: Record<string, JsonSchema> = {}
  for (const [status, [name, description]] of Object.entries(ERRORS)) {
    const headers = status === '429' ? { 'Retry-After': ref('headers', 'RetryAfter') } : status === '405' ? { Allow: ref('headers', 'Allow') } : undefined
    responses[name] = { description, ...(headers && { headers }), content: { 'application/json': { schema: ref('schemas', 'ErrorEnvelope') } } }
    responses[`OpenAI${name}`] = { description, ...(headers && { headers }), content: { 'application/json': { schema: ref('schemas', 'OpenAIError') } } }
  }
  return {
    responses,
    headers: {
      RetryAfter: { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } },
      Allow: { description: 'The methods the path serves', schema: { type: 'string' } },
    },
  }
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
  const parameters: JsonSchema[] = endpoint.pathParams.map((name) => ({ name, in: 'path', required: true, schema: object?.properties[name] ?? { type: 'string' } }))
  const rest = Object.entries(object?.properties ?? {}).filter(([name]) => !endpoint.pathFields.includes(name))
  const required = (object?.required ?? []).filter((name) => !endpoint.pathFields.includes(name))
  if (endpoint.multipart) {
    // The file is the form; what else the operation takes (an effect, a ratio) is in the query.
    for (const [name, schema] of rest) parameters.push({ name, in: 'query', required: required.includes(name), schema })
    const form = { type: 'object', properties: { [endpoint.multipart]: { ...binary('application/octet-stream'), format: 'binary' } }, required: [endpoint.multipart] }
    return { parameters, requestBody: { required: true, content: { 'multipart/form-data': { schema: form } } } }
  }
  if (endpoint.inputIn === 'query') {
    if (input && !object) throw new Error(`${endpoint.method} ${endpoint.path}: a query input must be an object schema`)
    for (const [name, schema] of rest) parameters.push({ name, in: 'query', required: required.includes(name), schema })
    return { parameters }
  }
  if (!input || (object && rest.length === 0)) return { parameters }
  // A named body keeps its component unless path fields have to come out of it.
  const whole = object && rest.length < Object.keys(object.properties).length ? { ...schemas.resolve(input), properties: Object.fromEntries(rest), required } : input
  if (Array.isArray(whole.required) && whole.required.length === 0) delete whole.required
  // The social API's bodies: an unknown field is ignored, but not an id (rest/adapter.ts, refuseIds).
  const schema = endpoint.enveloped ? { ...whole, description: [whole.description, SOCIAL_BODY].filter(Boolean).join('. ') } : whole
  return { parameters, requestBody: { required: required.length > 0, content: { 'application/json': { schema } } } }
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
    case 'html':
      return { description: 'An HTML page (or one of its files)', content: { 'text/html': { schema: { type: 'string' } } } }
    case 'event-stream':
      return { description: 'Server-Sent Events until the client leaves', content: { 'text/event-stream': { schema: { type: 'string' } } } }
    case 'redirect':
      return { description: 'A redirect', headers: { Location: { description: 'Where to go', schema: { type: 'string' } } } }
    case 'json': {
      // An operation whose input has a `stream` flag answers Server-Sent Events when it is set (the chat operations).
      const input = endpoint.input && objectOf(schemas.toSchema(endpoint.input, 'input'), schemas)
      const stream = input?.properties.stream ? { 'text/event-stream': { schema: { type: 'string', description: 'With `stream: true`: chunks as Server-Sent Events, ending with `data: [DONE]`' } } } : {}
      return { description: endpoint.enveloped ? 'The envelope, with the result in `data`' : 'The result', content: { 'application/json': { schema: json }, ...stream } }
    }
  }
}

/** The error statuses an endpoint can answer. */
function errorStatuses(endpoint: Endpoint): number[] {
  // Every method but GET and a plain DELETE reads a body, which can be malformed or too large.
  const readsBody = endpoint.inputIn === 'body'
  const statuses = [405, 500]
  if (endpoint.input || readsBody || endpoint.pathParams.length > 0) statuses.push(400)
  if (endpoint.auth !== 'none') statuses.push(401, 403)
  if (endpoint.pathParams.length > 0) statuses.push(404)
  if (readsBody) statuses.push(413)
  if (endpoint.rateLimited) statuses.push(429)
  return statuses.sort((a, b) => a - b)
}

function operationOf(endpoint: Endpoint, schemas: SchemaCollector): JsonSchema {
  const { parameters, requestBody } = requestOf(endpoint, schemas)
  const responses: Record<string, JsonSchema> = { [endpoint.answers === 'redirect' ? 302 : endpoint.status]: successOf(endpoint, schemas) }
  for (const status of errorStatuses(endpoint)) {
    const name = ERRORS[status][0]
    responses[status] = ref('responses', endpoint.errors === 'openai' ? `OpenAI${name}` : name)
  }
  return {
    operationId: endpoint.operationId,
    ...(endpoint.summary && { summary: endpoint.summary }),
    tags: [endpoint.tag],
    ...(endpoint.auth === 'required' && { security: [{ [SECURITY_SCHEME]: [] }] }),
    // An optional token: without one the operation answers as for anyone; with one, for that user.
    ...(endpoint.auth === 'optional' && { security: [{}, { [SECURITY_SCHEME]: [] }] }),
    ...(parameters.length > 0 && { parameters }),
    ...(requestBody && { requestBody }),
    responses,
  }
}

/** The document for `endpoints`; `servers` is left to the answer, which knows the request's origin. */
export function buildOpenApiDocument(endpoints: Endpoint[]): OpenApiDocument {
  const schemas = createSchemaCollector()
  const paths: OpenApiDocument['paths'] = {}
  for (const endpoint of endpoints) {
    paths[endpoint.path] ??= {}
    paths[endpoint.path][endpoint.method.toLowerCase()] = operationOf(endpoint, schemas)
  }
  const { responses, headers } = errorComponents()
  return {
    openapi: '3.1.0',
    info: {
      title: 'Plaza',
      version,
      description:
        'The social API (`/api/mobile`, answers in the envelope `{status, message, data, timestamp}`), the utility catalog (`/api`) and the server\'s own paths, generated from the route tables and the zod schemas that validate each request.',
    },
    tags: [...new Set(endpoints.map((endpoint) => endpoint.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { ...BASE_SCHEMAS, ...schemas.components },
      responses,
      headers,
      securitySchemes: {
        [SECURITY_SCHEME]: { type: 'http', scheme: 'bearer', description: 'The `token` of a session (register, login or refresh answer one)' },
      },
    },
  }
}
