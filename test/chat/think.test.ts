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

think('a closing tag nobody opened: reasoning before it when the text is whole, never shown when streamed', () => {
  assert.equal(splitThink('Let me see.\n</think>\n\nFour.'), { reasoning: 'Let me see.', content: 'Four.' })
  assert.equal(splitThink('Quote <think>x</think> then </think> y'), { reasoning: '', content: 'Quote <think>x</think> then </think> y' }, 'an answer that opened a tag itself keeps its tags')
  for (let cut = 0; cut <= 12; cut++) {
    const text = 'Hmm.</think>Yes.'
    assert.equal(streamed([text.slice(0, cut), text.slice(cut)]), { reasoning: '', content: 'Hmm.Yes.' }, `cut at ${cut}`)
  }
})

think('a model that starts in its reasoning: everything up to </think> is reasoning, however it is cut', () => {
  const text = 'The user asks 2+2.\n</think>\n\n4'
  for (let cut = 0; cut <= text.length; cut++) {
    const splitter = new ThinkSplitter({ startsInReasoning: true })
    const a = splitter.push(text.slice(0, cut))
    const b = splitter.push(text.slice(cut))
    const c = splitter.end()
    assert.equal({ reasoning: a.reasoning + b.reasoning + c.reasoning, content: a.content + b.content + c.content }, { reasoning: 'The user asks 2+2.', content: '4' }, `cut at ${cut}`)
  }
  // An explicit <think> is read as usual.
  const tagged = new ThinkSplitter({ startsInReasoning: true })
  assert.equal(tagged.push('<think>a</think>b'), { reasoning: 'a', content: 'b' })
  // When the upstream sends its reasoning apart, the text is the answer.
  const parsed = new ThinkSplitter({ startsInReasoning: true })
  parsed.reasoningIsSeparate()
  assert.equal(parsed.push('4'), { reasoning: '', content: '4' })
  // Whole text that never closes the reasoning is all answer.
  assert.equal(splitThink('Just an answer.', { startsInReasoning: true }), { reasoning: '', content: 'Just an answer.' })
})

think.run()
