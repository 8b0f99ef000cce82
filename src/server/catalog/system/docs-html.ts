/**
 * The API reference page as HTML, written on the server from the OpenAPI document: every
 * operation by tag with its token, parameters, body, example and answers, then the named schemas.
 * The page reads whole without a script; /docs/plaza-docs.js only adds "Try it" (docs-assets.ts).
 */
import type { JsonSchema } from './json-schema.js'
import type { OpenApiDocument } from './openapi-document.js'

type Json = any

const escapeHtml = (text: unknown) =>
  String(text).replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!)

/** The little Markdown the document's descriptions use: `code` spans, and `- ` lines as a list. */
function markdown(text: string | undefined): string {
  if (!text) return ''
  const inline = (line: string) => escapeHtml(line).replace(/`([^`]+)`/g, '<code>$1</code>')
  const lines = text.split('\n')
  if (lines.every((line) => line.startsWith('- '))) return `<ul>${lines.map((line) => `<li>${inline(line.slice(2))}</li>`).join('')}</ul>`
  return lines.map(inline).join('<br>')
}

const schemaName = (ref: string) => ref.split('/').pop()!
const schemaLink = (ref: string) => `<a href="#schema-${escapeHtml(schemaName(ref))}">${escapeHtml(schemaName(ref))}</a>`

/** A schema's type in a few words: `string (email)`, `integer`, `"a" | "b"`, `Post[]`, a link for a named one. */
function typeOf(schema: Json): string {
  if (!schema || typeof schema !== 'object' || Object.keys(schema).length === 0) return 'any'
  if (schema.$ref) return schemaLink(schema.$ref)
  if ('const' in schema) return `<code>${escapeHtml(JSON.stringify(schema.const))}</code>`
  if (Array.isArray(schema.enum)) {
    const shown = schema.enum.slice(0, 12).map((value: unknown) => `<code>${escapeHtml(JSON.stringify(value))}</code>`)
    return shown.join(' | ') + (schema.enum.length > 12 ? ` | … (${schema.enum.length} values)` : '')
  }
  for (const key of ['anyOf', 'oneOf'] as const) if (Array.isArray(schema[key])) return schema[key].map(typeOf).join(' | ')
  // The envelope with its `data`: `Envelope, data: Post`.
  if (Array.isArray(schema.allOf) && schema.allOf.length === 2 && schema.allOf[0].$ref && schema.allOf[1].properties?.data) {
    return `${typeOf(schema.allOf[0])}, <code>data</code>: ${typeOf(schema.allOf[1].properties.data)}`
  }
  if (Array.isArray(schema.allOf)) return schema.allOf.map(typeOf).join(' &amp; ')
  if (Array.isArray(schema.type)) return schema.type.map((type: string) => typeOf({ ...schema, type })).join(' | ')
  if (schema.type === 'array') return `${typeOf(schema.items)}[]`
  if (schema.type === 'string' && schema.contentMediaType) return `bytes (${escapeHtml(schema.contentMediaType)})`
  if (schema.type) return escapeHtml(schema.type) + (schema.format ? ` (${escapeHtml(schema.format)})` : '')
  return schema.properties ? 'object' : 'any'
}

/** What a schema allows beyond its type: lengths, ranges, a pattern, the default. */
function constraintsOf(schema: Json): string {
  if (!schema || typeof schema !== 'object') return ''
  const parts: string[] = []
  const range = (low: unknown, high: unknown, unit: string) => {
    if (low !== undefined && high !== undefined) parts.push(`${low} to ${high}${unit}`)
    else if (low !== undefined) parts.push(`at least ${low}${unit}`)
    else if (high !== undefined && Number(high) < Number.MAX_SAFE_INTEGER) parts.push(`at most ${high}${unit}`)
  }
  range(schema.minLength, schema.maxLength, ' characters')
  range(schema.minItems, schema.maxItems, ' items')
  range(schema.minimum ?? (schema.exclusiveMinimum !== undefined ? `more than ${schema.exclusiveMinimum}` : undefined), schema.maximum, '')
  if (schema.pattern) parts.push(`matches <code>${escapeHtml(schema.pattern)}</code>`)
  if ('default' in schema) parts.push(`default <code>${escapeHtml(JSON.stringify(schema.default))}</code>`)
  return parts.length ? `<span class="rules">${parts.join('; ')}</span>` : ''
}

/** An object's fields as a table, inline objects nested to `depth`; null for a schema that is no object. */
function fieldsOf(schema: Json, depth = 0): string | null {
  const properties = schema?.properties as Record<string, Json> | undefined
  if (!properties || Object.keys(properties).length === 0) return null
  const required = new Set<string>(schema.required ?? [])
  const rows = Object.entries(properties).map(([name, field]) => {
    const nested = depth < 2 && !field.$ref ? fieldsOf(field.type === 'array' ? field.items : field, depth + 1) : null
    return `<tr><td><code>${escapeHtml(name)}</code>${required.has(name) ? ' <span class="req">required</span>' : ''}</td><td>${typeOf(field)}</td><td>${markdown(field.description)} ${constraintsOf(field)}${nested ?? ''}</td></tr>`
  })
  return `<table class="fields"><tbody>${rows.join('')}</tbody></table>`
}

const METHOD_ORDER = ['get', 'post', 'put', 'patch', 'delete']

/** Who may call an operation, from its `security`. */
function whoMay(security: Json[], schemes: Record<string, Json>): string {
  if (!security || security.length === 0) return '<span class="who public">no token</span>'
  const optional = security.some((requirement) => Object.keys(requirement).length === 0)
  const names = security.flatMap((requirement) => Object.keys(requirement))
  const label = (name: string) => ({ bearerAuth: 'session token', gatewayKey: 'gateway key', metricsToken: 'metrics token' })[name] ?? name
  const title = names.map((name) => schemes[name]?.description ?? '').join(' ')
  return `<span class="who${optional ? ' optional' : ''}" title="${escapeHtml(title)}">${names.map(label).join(' or ')}${optional ? ', optional' : ''}</span>`
}

function parametersOf(operation: Json): string {
  const parameters = (operation.parameters ?? []) as Json[]
  if (parameters.length === 0) return ''
  const rows = parameters.map(
    (parameter) =>
      `<tr><td><code>${escapeHtml(parameter.name)}</code>${parameter.required ? ' <span class="req">required</span>' : ''}</td><td>${escapeHtml(parameter.in)}</td><td>${typeOf(parameter.schema)}</td><td>${markdown(parameter.description ?? parameter.schema?.description)} ${constraintsOf(parameter.schema)}${parameter.example !== undefined ? ` <span class="eg">e.g. <code>${escapeHtml(JSON.stringify(parameter.example))}</code></span>` : ''}</td></tr>`,
  )
  return `<h4>Parameters</h4><table class="params"><thead><tr><th>Name</th><th>In</th><th>Type</th><th>About</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

function bodyOf(operation: Json, schemas: Record<string, Json>): string {
  const content = operation.requestBody?.content as Record<string, Json> | undefined
  if (!content) return ''
  return Object.entries(content)
    .map(([type, media]) => {
      const schema = media.schema?.$ref ? schemas[schemaName(media.schema.$ref)] : media.schema
      const named = media.schema?.$ref ? ` (${schemaLink(media.schema.$ref)})` : ''
      const example = media.example !== undefined ? `<h5>Example</h5><pre class="example"><code>${escapeHtml(JSON.stringify(media.example, null, 2))}</code></pre>` : ''
      return `<h4>Body <code>${escapeHtml(type)}</code>${named}</h4>${fieldsOf(schema) ?? `<p>${typeOf(media.schema)}</p>`}${example}`
    })
    .join('')
}

function responsesOf(operation: Json, components: Record<string, Json>): string {
  const rows = Object.entries(operation.responses as Record<string, Json>).map(([status, declared]) => {
    const response = declared.$ref ? components[schemaName(declared.$ref)] : declared
    const content = Object.entries((response?.content ?? {}) as Record<string, Json>)
      .map(([type, media]) => `<code>${escapeHtml(type)}</code> ${typeOf(media.schema)}`)
      .join('<br>')
    return `<tr class="s${status[0]}"><td>${escapeHtml(status)}</td><td>${markdown(response?.description)}</td><td>${content}</td></tr>`
  })
  return `<h4>Answers</h4><table class="answers"><thead><tr><th>Status</th><th>When</th><th>Body</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-')

/** The whole page: `style` is its style sheet (written into the page), `script` the address of its script. */
export function renderDocsPage(document: OpenApiDocument, assets: { style: string; script: string }): string {
  const doc = document as Json
  const schemas = (doc.components?.schemas ?? {}) as Record<string, JsonSchema>
  const responses = (doc.components?.responses ?? {}) as Record<string, Json>
  const schemes = (doc.components?.securitySchemes ?? {}) as Record<string, Json>
  const byTag = new Map<string, Array<{ path: string; method: string; operation: Json }>>()
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const method of METHOD_ORDER) {
      const operation = item[method]
      if (!operation) continue
      const tag = operation.tags?.[0] ?? 'other'
      byTag.set(tag, [...(byTag.get(tag) ?? []), { path, method, operation }])
    }
  }
  const tags = ((doc.tags ?? []) as Array<{ name: string; description?: string }>).filter((tag) => byTag.has(tag.name))

  const nav = tags
    .map(
      (tag) =>
        `<li><a href="#tag-${slug(tag.name)}">${escapeHtml(tag.name)}</a><ul>${byTag
          .get(tag.name)!
          .map(({ path, method, operation }) => `<li><a href="#${escapeHtml(operation.operationId)}"><span class="m ${method}">${method.toUpperCase()}</span> ${escapeHtml(path)}</a></li>`)
          .join('')}</ul></li>`,
    )
    .join('')

  const sections = tags
    .map((tag) => {
      const operations = byTag.get(tag.name)!.map(
        ({ path, method, operation }) => `<section class="op" id="${escapeHtml(operation.operationId)}" data-method="${method}" data-path="${escapeHtml(path)}">
<h3 class="op-head"><span class="m ${method}">${method.toUpperCase()}</span> <code class="path">${escapeHtml(path)}</code> ${whoMay(operation.security, schemes)}</h3>
<p class="summary">${markdown(operation.summary)}</p>
${parametersOf(operation)}${bodyOf(operation, schemas)}${responsesOf(operation, responses)}
</section>`,
      )
      return `<section class="tag" id="tag-${slug(tag.name)}"><h2>${escapeHtml(tag.name)}</h2><p>${markdown(tag.description)}</p>${operations.join('\n')}</section>`
    })
    .join('\n')

  const components = Object.entries(schemas)
    .map(([name, schema]) => `<section class="schema" id="schema-${escapeHtml(name)}"><h3>${escapeHtml(name)}</h3><p>${markdown(schema.description as string | undefined)}</p>${fieldsOf(schema) ?? `<p>${typeOf(schema)}</p>`}</section>`)
    .join('\n')

  const tokens = Object.entries(schemes)
    .map(([name, scheme]) => `<li><code>${escapeHtml(name)}</code>: ${markdown(scheme.description)}</li>`)
    .join('')

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(doc.info.title)} API reference</title>
<style>${assets.style}</style>
<script src="${assets.script}" defer></script>
</head>
<body>
<nav id="toc"><p><a href="#top">${escapeHtml(doc.info.title)} ${escapeHtml(doc.info.version)}</a></p><ul>${nav}<li><a href="#schemas">Schemas</a></li></ul></nav>
<main id="top">
<header><h1>${escapeHtml(doc.info.title)} API reference</h1>
<p>${markdown(doc.info.description)}</p>
<p>The OpenAPI document: <a href="/api/openapi.json">/api/openapi.json</a>. Tokens go in <code>Authorization: Bearer &lt;token&gt;</code>:</p><ul>${tokens}</ul>
</header>
${sections}
<section id="schemas"><h2>Schemas</h2>${components}</section>
</main>
</body>
</html>
`
}
