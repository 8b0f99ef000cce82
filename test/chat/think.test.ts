import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { splitThink, ThinkSplitter, type ThinkParts } from '../../src/server/chat/think.js'

const think = suite('think splitter')

const cases: Array<[text: string, expected: ThinkParts]> = [
  ['<think>Weigh it.</think>The answer.', { reasoning: 'Weigh it.', content: 'The answer.' }],
  ['<think>\nStep 1.\n\nStep 2.\n</think>\n\nDone.', { reasoning: 'Step 1.\n\nStep 2.', content: 'Done.' }],
  ['  \n<think>lead ws</think> x', { reasoning: 'lead ws', content: 'x' }],
  ['No thinking here.', { reasoning: '', content: 'No thinking here.' }],
  ['  indented answer', { reasoning: '', content: '  indented answer' }],
  ['Answer with <think>inside</think> later', { reasoning: '', content: 'Answer with <think>inside</think> later' }],
  ['<thinking is not a tag', { reasoning: '', content: '<thinking is not a tag' }],
  ['<thi', { reasoning: '', content: '<thi' }],
  ['<think>cut off by max_tokens', { reasoning: 'cut off by max_tokens', content: '' }],
  ['<think>ends with a partial </thi', { reasoning: 'ends with a partial </thi', content: '' }],
  ['<think>a < b and </b> too</think>ok', { reasoning: 'a < b and </b> too', content: 'ok' }],
  ['<think></think>Only answer', { reasoning: '', content: 'Only answer' }],
  ['', { reasoning: '', content: '' }],
]

think('splits whole texts', () => {
  for (const [text, expected] of cases) assert.equal(splitThink(text), expected, JSON.stringify(text))
})

function streamed(pieces: string[]): ThinkParts {
  const splitter = new ThinkSplitter()
  const out = { reasoning: '', content: '' }
  for (const piece of pieces) {
    const parts = splitter.push(piece)
    out.reasoning += parts.reasoning
    out.content += parts.content
  }
  const rest = splitter.end()
  return { reasoning: out.reasoning + rest.reasoning, content: out.content + rest.content }
}

think('gives the same split however the text is cut: at every pair of positions, and one character at a time', () => {
  for (const [text, expected] of cases) {
    assert.equal(streamed([...text]), expected, `char by char: ${JSON.stringify(text)}`)
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j++) {
        assert.equal(streamed([text.slice(0, i), text.slice(i, j), text.slice(j)]), expected, `cut at ${i},${j}: ${JSON.stringify(text)}`)
      }
    }
  }
})

think('releases text as soon as it cannot be part of a tag', () => {
  const splitter = new ThinkSplitter()
  assert.equal(splitter.push('<thi'), { reasoning: '', content: '' })
  assert.equal(splitter.push('nk>Let me'), { reasoning: 'Let me', content: '' })
  assert.equal(splitter.push(' see </th'), { reasoning: ' see', content: '' })
  assert.equal(splitter.push('ink>\n\nYes'), { reasoning: '', content: 'Yes' })
  assert.equal(splitter.push('.'), { reasoning: '', content: '.' })
  assert.equal(splitter.end(), { reasoning: '', content: '' })

  const plain = new ThinkSplitter()
  assert.equal(plain.push('Hi'), { reasoning: '', content: 'Hi' })
})

think.run()
