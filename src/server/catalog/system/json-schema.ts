/**
 * zod schemas as OpenAPI 3.1 schema objects, through zod 4's own JSON Schema output (OpenAPI 3.1
 * schemas are JSON Schema 2020-12). A schema named with `.meta({ id })` lands in zod's `$defs`;
 * those are hoisted into `components/schemas`, so one named shape is one component however many
 * operations use it.
 */
import { z } from 'zod'

export type JsonSchema = Record<string, unknown>

const DEFS = '#/$defs/'
const COMPONENTS = '#/components/schemas/'

/** Points `$ref`s at the hoisted components, renamed where a name had to change. */
function rewriteRefs(value: unknown, names: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((item) => rewriteRefs(item, names))
  if (value === null || typeof value !== 'object') return value
  const out: JsonSchema = {}
  for (const [key, item] of Object.entries(value)) {
    if (key === '$ref' && typeof item === 'string' && item.startsWith(DEFS)) {
      const name = item.slice(DEFS.length)
      out.$ref = COMPONENTS + (names.get(name) ?? name)
    } else {
      out[key] = rewriteRefs(item, names)
    }
  }
  return out
}

/**
 * Says outright what zod does with a request's fields that no schema names: an object schema (not
 * a strict one, which zod already writes as `additionalProperties: false`) ignores them, so apps
 * of other versions may send them.
 */
function openObjects(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(openObjects)
  if (value === null || typeof value !== 'object') return value
  const out: JsonSchema = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, key === 'properties' ? Object.fromEntries(Object.entries(item as JsonSchema).map(([name, field]) => [name, openObjects(field)])) : openObjects(item)]))
  if (out.type === 'object' && out.properties && out.additionalProperties === undefined) out.additionalProperties = true
  return out
}

export interface SchemaCollector {
  /** `schema` as a request (`input`) or an answer (`output`) reads it; its named parts become components. */
  toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema
  /** Follows a `$ref` to a collected component (other schemas are returned as they are). */
  resolve(schema: JsonSchema): JsonSchema
  /** `components/schemas`: what was hoisted so far, plus anything added by name. */
  components: Record<string, JsonSchema>
}

export function createSchemaCollector(): SchemaCollector {
  const components: Record<string, JsonSchema> = {}
  const texts = new Map<string, string>()

  /** Takes `name` for `text`; two different schemas under one name are a mistake in the schemas. */
  function claim(name: string, text: string): string {
    const held = texts.get(name)
    if (held !== undefined && held !== text) throw new Error(`two different schemas are both named ${name} (.meta({ id }))`)
    return name
  }

  return {
    components,
    toSchema(schema, io) {
      const convert = (form: 'input' | 'output') => {
        const converted = z.toJSONSchema(schema, { io: form, unrepresentable: 'any' }) as JsonSchema & { $defs?: Record<string, JsonSchema> }
        return form === 'input' ? (openObjects(converted) as typeof converted) : converted
      }
      const { $schema: _dialect, $defs, ...root } = convert(io)
      // A named schema whose request form differs from its answer form (defaults, transforms) is two
      // components: the answer keeps the name, the request gets `…Input`.
      const answerDefs = io === 'input' && $defs ? (convert('output').$defs ?? {}) : {}
      const names = new Map<string, string>()
      const defs = Object.entries($defs ?? {})
      // Names first, so that references between definitions are rewritten to the final names.
      for (const [name, def] of defs) {
        const text = JSON.stringify(def)
        names.set(name, claim(io === 'input' && JSON.stringify(answerDefs[name]) !== text ? `${name}Input` : name, text))
      }
      for (const [name, def] of defs) {
        const final = names.get(name)!
        if (!texts.has(final)) {
          texts.set(final, JSON.stringify(def))
          components[final] = rewriteRefs(def, names) as JsonSchema
        }
      }
      return rewriteRefs(root, names) as JsonSchema
    },
    resolve(schema) {
      const ref = schema.$ref
      if (typeof ref !== 'string' || !ref.startsWith(COMPONENTS)) return schema
      return components[ref.slice(COMPONENTS.length)] ?? schema
    },
  }
}
