import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { detectLanguage } from '../../src/server/codeimage/languages.js'
import { ONE_LINERS } from './detect-table.js'

test('the table covers at least 30 snippets in at least 10 languages', () => {
  assert.ok(ONE_LINERS.length >= 30)
  assert.ok(new Set(ONE_LINERS.map(([, language]) => language)).size >= 10)
})

for (const [code, language] of ONE_LINERS) {
  test(`detects ${JSON.stringify(code)} as ${language}`, () => {
    assert.is(detectLanguage(code), language)
  })
}

test('prose and lone words stay plain text', () => {
  for (const text of ['hello world', 'The quick brown fox jumps over the lazy dog.', 'Lorem ipsum dolor sit amet, consectetur', '안녕하세요 세계']) {
    assert.is(detectLanguage(text), 'text', text)
  }
})

test('longer code is still scored as a whole: TypeScript that calls console.log stays TypeScript', () => {
  const code = `interface User {\n  id: number\n  name: string\n}\n\nexport function greet(user: User): string {\n  const message: string = \`hi \${user.name}\`\n  console.log(message)\n  return message\n}\n`
  assert.is(detectLanguage(code), 'typescript')
})

test.run()
