/**
 * Run by test/run.ts after every test file: each answer the suite's test servers gave (recorded by
 * test/helpers/recorder.ts) against the OpenAPI document the server publishes. An answer with a
 * status its operation does not declare, a media type not declared for that status, or a JSON body
 * that does not match the declared schema fails the run, naming the test file that got it. Answers
 * to paths and methods that are no operation (a 405, an unknown path) are the fuzz test's to check.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { listEndpoints } from '../../src/server/catalog/system/endpoints.js'
import { buildOpenApiDocument } from '../../src/server/catalog/system/openapi-document.js'
import { createOpenApiValidator } from '../helpers/openapi-validator.js'
import type { RecordedAnswer } from '../helpers/recorder.js'

const directory = process.env.PLAZA_TEST_ANSWERS_DIR

function recorded(): RecordedAnswer[] {
  if (!directory) return []
  return readdirSync(directory)
    .filter((name) => name.endsWith('.jsonl'))
    .flatMap((name) =>
      readFileSync(path.join(directory, name), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as RecordedAnswer),
    )
}

test("every answer the suite's test servers gave is declared by the OpenAPI document, its JSON body matching the schema", () => {
  const answers = recorded()
  const validator = createOpenApiValidator(buildOpenApiDocument(listEndpoints()))
  const problems = new Map<string, { problem: string; files: Set<string>; count: number }>()
  const operations = new Set<string>()
  for (const answer of answers) {
    const { operation, problem } = validator.check({ ...answer, bodyUnknown: answer.truncated })
    if (operation) operations.add(operation)
    if (!problem) continue
    // One line per operation, status and kind of problem, however often the suite met it.
    const key = `${operation} ${answer.status} ${problem.replace(/^.*? -> \d+: /, '').slice(0, 80)}`
    const entry = problems.get(key) ?? { problem, files: new Set<string>(), count: 0 }
    entry.files.add(answer.file)
    entry.count++
    problems.set(key, entry)
  }
  const report = [...problems.values()].map(({ problem, files, count }) => `${problem.slice(0, 600)}\n    (${count}x, in ${[...files].join(', ')})`)
  console.log(`${answers.length} recorded answers, ${operations.size} operations`)
  assert.equal(report, [], `${report.length} answers break the contract:\n${report.join('\n')}`)
})

test.run()
