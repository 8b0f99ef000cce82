/**
 * Checks answers against the published contract, `/api/openapi.json`: the operation a request
 * reached (method and path template, literal segments first, as OpenAPI matches them), whether the
 * answer's status is one it declares, whether its media type is declared for that status, and
 * whether a JSON body matches the declared schema. Schemas are compiled by Ajv for JSON Schema
 * 2020-12 (the dialect of OpenAPI 3.1) with its formats, on first use per response.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

export interface Exchange {
  method: string
  /** The request's path, with or without its query. */
  path: string
  status: number
  /** The answer's Content-Type header ('' when none). */
  contentType: string
  /** The answer's body as text (only JSON bodies are read). */
  body: string
  /** The body is not at hand (too long, or it never finished): check the status and media type only. */
  bodyUnknown?: boolean
}

export interface Verdict {
  /** `METHOD /template` of the operation the request reached, or null when no operation has that method and path. */
  operation: string | null
  /** What breaks the contract, or null. */
  problem: string | null
}

type Json = any

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'])

interface Template {
  path: string
  pattern: RegExp
  /** Literal segments: a path with more of them wins (OpenAPI: concrete paths before templated ones). */
  literals: number
}

const DOCUMENT_ID = 'https://plaza.invalid/openapi.json'

export interface OpenApiValidator {
  check(exchange: Exchange): Verdict
  /** The operation (`METHOD /template`) a method and path reach, or null. */
  operationOf(method: string, path: string): string | null
}

export function createOpenApiValidator(document: Json): OpenApiValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true })
  ;(addFormats as unknown as (ajv: Ajv2020) => void)(ajv)
  // Only the components are a schema resource: refs inside response schemas point at them.
  ajv.addSchema({ $id: DOCUMENT_ID, components: document.components })
  const templates: Template[] = Object.keys(document.paths).map((path) => {
    const segments = path.split('/').filter(Boolean)
    const source = segments.map((segment) => (/^\{[^}]+\}$/.test(segment) ? '/[^/]+' : '/' + segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')
    return { path, pattern: new RegExp(`^${source || '/'}/?$`), literals: segments.filter((segment) => !segment.startsWith('{')).length }
  })
  templates.sort((a, b) => b.literals - a.literals)
  const compiled = new Map<object, ValidateFunction>()

  const resolve = (value: Json): Json => {
    let target = value
    for (let depth = 0; target?.$ref && depth < 5; depth++) {
      const [, ...pointer] = String(target.$ref).replace(/^#\//, '#/').split('/')
      target = pointer.reduce((node: Json, key: string) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document)
    }
    return target
  }

  /** The schema with its `#/components/...` refs made absolute, so Ajv resolves them in the components resource. */
  const absolute = (schema: Json): Json => {
    if (Array.isArray(schema)) return schema.map(absolute)
    if (schema === null || typeof schema !== 'object') return schema
    return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? DOCUMENT_ID + value : absolute(value)]))
  }

  const validatorOf = (schema: object): ValidateFunction => {
    let validate = compiled.get(schema)
    if (!validate) {
      validate = ajv.compile(absolute(schema))
      compiled.set(schema, validate)
    }
    return validate
  }

  function operationOf(method: string, rawPath: string): string | null {
    // As the server reads it: dot segments (`..`, `%2e%2e`) resolved, the query left out. A target
    // that is not a path (`http://[::1/`, `ftp://a/health`: the server reads a valid http(s) one as
    // its path before this is recorded) is refused before routing: no operation's answer.
    if (!rawPath.startsWith('/')) return null
    let path: string
    try {
      path = new URL(rawPath, 'http://server.invalid').pathname
    } catch {
      return null
    }
    const template = templates.find((candidate) => candidate.pattern.test(path))
    if (!template) return null
    const operation = document.paths[template.path]?.[method.toLowerCase()]
    return operation && METHODS.has(method.toLowerCase()) ? `${method.toUpperCase()} ${template.path}` : null
  }

  function check(exchange: Exchange): Verdict {
    const operation = operationOf(exchange.method, exchange.path)
    if (!operation) return { operation, problem: null }
    const [method, template] = operation.split(' ')
    const where = `${exchange.method} ${exchange.path.slice(0, 160)} -> ${exchange.status}`
    const declared = document.paths[template][method.toLowerCase()].responses as Record<string, Json>
    const response = resolve(declared[String(exchange.status)] ?? declared[`${String(exchange.status)[0]}XX`] ?? declared.default)
    if (!response) return { operation, problem: `${where}: status ${exchange.status} is not declared for ${operation} (declared: ${Object.keys(declared).join(', ')})` }
    // HEAD and 304 carry no body; nothing more to check.
    if (exchange.method === 'HEAD' || exchange.status === 304 || exchange.status === 204) return { operation, problem: null }
    const type = exchange.contentType.split(';')[0].trim().toLowerCase()
    const content = (response.content ?? {}) as Record<string, Json>
    if (!type) return { operation, problem: exchange.body.length > 0 ? `${where}: a body without a Content-Type` : null }
    const mediaKey =
      Object.keys(content).find((key) => key.toLowerCase() === type) ??
      Object.keys(content).find((key) => key.endsWith('/*') && type.startsWith(key.slice(0, -1).toLowerCase())) ??
      Object.keys(content).find((key) => key === '*/*')
    if (!mediaKey) return { operation, problem: `${where}: ${type} is not declared for ${operation} ${exchange.status} (declared: ${Object.keys(content).join(', ') || 'no body'})` }
    if ((type !== 'application/json' && !type.endsWith('+json')) || exchange.bodyUnknown) return { operation, problem: null }
    let body: unknown
    try {
      body = JSON.parse(exchange.body)
    } catch {
      return { operation, problem: `${where}: declared JSON but not JSON: ${exchange.body.slice(0, 200)}` }
    }
    const schema = content[mediaKey]?.schema
    if (!schema) return { operation, problem: null }
    const validate = validatorOf(schema)
    if (validate(body)) return { operation, problem: null }
    const errors = (validate.errors ?? []).slice(0, 3).map((error) => `${error.instancePath || '/'} ${error.message}${error.params && 'additionalProperty' in error.params ? ` (${error.params.additionalProperty})` : ''}`)
    return { operation, problem: `${where}: the body does not match the declared schema: ${errors.join('; ')}: ${exchange.body.slice(0, 300)}` }
  }

  return { check, operationOf }
}
