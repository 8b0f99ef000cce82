/**
 * Splits a leading `<think>…</think>` block (spec: "a reasoning block … before the answer") from
 * the answer, incrementally: text arrives in arbitrary chunks, so a tag may be cut anywhere and
 * the splitter holds back only the few characters that could still turn out to be a tag.
 * Whitespace around the reasoning and at the start of the answer is trimmed, as a reader expects.
 */
const OPEN = '<think>'
const CLOSE = '</think>'

export interface ThinkParts {
  reasoning: string
  content: string
}

type Mode = 'start' | 'reasoning' | 'answer' | 'plain'

/** Length of the longest proper prefix of `tag` that `text` ends with. */
function partialTagAtEnd(text: string, tag: string): number {
  for (let k = Math.min(tag.length - 1, text.length); k > 0; k--) if (text.endsWith(tag.slice(0, k))) return k
  return 0
}

export class ThinkSplitter {
  #mode: Mode = 'start'
  #held = ''
  #reasoningStarted = false

  /** Feeds the next piece of text; returns what can be classified now. */
  push(text: string): ThinkParts {
    const out: ThinkParts = { reasoning: '', content: '' }
    this.#feed(text, out)
    return out
  }

  /** The text is complete: releases whatever was held back. */
  end(): ThinkParts {
    const out: ThinkParts = { reasoning: '', content: '' }
    if (this.#mode === 'start') out.content = this.#held
    else if (this.#mode === 'reasoning') this.#emitReasoning(this.#held.trimEnd(), out)
    this.#held = ''
    this.#mode = 'plain'
    return out
  }

  #feed(text: string, out: ThinkParts) {
    switch (this.#mode) {
      case 'plain':
        out.content += text
        return
      case 'answer': {
        const rest = text.trimStart()
        if (rest) {
          this.#mode = 'plain'
          out.content += rest
        }
        return
      }
      case 'start': {
        this.#held += text
        const lead = this.#held.trimStart()
        if (lead.startsWith(OPEN)) {
          this.#held = ''
          this.#mode = 'reasoning'
          this.#feed(lead.slice(OPEN.length), out)
        } else if (lead === '' || OPEN.startsWith(lead)) {
          return // still could be the opening tag
        } else {
          this.#mode = 'plain'
          out.content += this.#held
          this.#held = ''
        }
        return
      }
      case 'reasoning': {
        this.#held += text
        const close = this.#held.indexOf(CLOSE)
        if (close >= 0) {
          this.#emitReasoning(this.#held.slice(0, close).trimEnd(), out)
          const after = this.#held.slice(close + CLOSE.length)
          this.#held = ''
          this.#mode = 'answer'
          this.#feed(after, out)
          return
        }
        // Keep a possible partial closing tag and trailing whitespace (it may be the reasoning's end).
        const keep = partialTagAtEnd(this.#held, CLOSE)
        const settled = this.#held.slice(0, this.#held.length - keep)
        const emit = settled.trimEnd()
        this.#held = this.#held.slice(emit.length)
        this.#emitReasoning(emit, out)
        return
      }
    }
  }

  #emitReasoning(text: string, out: ThinkParts) {
    const piece = this.#reasoningStarted ? text : text.trimStart()
    if (!piece) return
    this.#reasoningStarted = true
    out.reasoning += piece
  }
}

/** Splits a complete text at once (the non-streamed answer); the same rules as streaming. */
export function splitThink(text: string): ThinkParts {
  const splitter = new ThinkSplitter()
  const first = splitter.push(text)
  const last = splitter.end()
  return { reasoning: first.reasoning + last.reasoning, content: first.content + last.content }
}
