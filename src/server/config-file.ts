/** The `PLAZA_LLM_CONFIG` file (YAML, or JSON by its extension), read and checked against a schema by the chat gateway and the provider layer. */
import { readFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'
import type { z } from 'zod'

/** The file's contents as `schema` parses them; every problem goes to `fail` as one line naming the file. */
export function readConfigFile<Schema extends z.ZodType>(file: string, schema: Schema, fail: (message: string) => never): z.output<Schema> {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    fail(`cannot read PLAZA_LLM_CONFIG file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
  }
  const json = /\.json$/i.test(file)
  let raw: unknown
  try {
    raw = json ? JSON.parse(text) : parseYaml(text)
  } catch (error) {
    fail(`${file} is not valid ${json ? 'JSON' : 'YAML'}: ${(error as Error).message.split('\n')[0]}`)
  }
  const parsed = schema.safeParse(raw ?? {})
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(top level)'}: ${i.message}`).join('; ')
    fail(`${file}: ${problems}`)
  }
  return parsed.data
}
