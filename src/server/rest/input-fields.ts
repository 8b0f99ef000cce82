/**
 * The fields of a route's input schema, as the REST adapter needs them: to tell a path segment a
 * route can take (`/posts/12`) from one it cannot (`/posts/feed` is not a post id), and to find
 * the ids in a body that the route would not apply.
 */
import type { z } from 'zod'
import { appRouter } from '../router.js'

/** What zod 4 keeps on every schema (`schema._zod.def`): its kind and the parts this module follows. */
interface Def {
  type: string
  shape?: Record<string, z.ZodType>
  innerType?: z.ZodType
  in?: z.ZodType
  options?: z.ZodType[]
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def

/**
 * The object fields of `schema`, through defaults, optionals, pipes and refinements (a union's
 * options together, the first naming a field wins); null when it is not an object.
 */
export function objectFields(schema: z.ZodType | undefined): Record<string, z.ZodType> | null {
  for (let current = schema, depth = 0; current && depth < 10; depth++) {
    const def = defOf(current)
    if (def.type === 'object') return def.shape ?? {}
    if (def.type === 'union') {
      const merged: Record<string, z.ZodType> = {}
      for (const option of def.options ?? []) for (const [name, field] of Object.entries(objectFields(option) ?? {})) merged[name] ??= field
      return merged
    }
    current = def.type === 'pipe' ? def.in : def.innerType
  }
  return null
}

/** The input fields of procedure `name` (a dotted path): none for one without input; null for one not loaded (a lazy router's). */
export function procedureFields(name: string): Record<string, z.ZodType> | null {
  const procedure = (appRouter._def.procedures as unknown as Record<string, { _def: { inputs: z.ZodType[] } } | undefined>)[name]
  if (!procedure) return null
  return procedure._def.inputs.length === 0 ? {} : objectFields(procedure._def.inputs[0])
}
