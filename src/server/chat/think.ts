/**
 * Splits a leading `<think>…</think>` block (spec: "a reasoning block … before the answer") from
 * the answer, incrementally: text arrives in arbitrary chunks, so a tag may be cut anywhere and
 * the splitter holds back only the few characters that could still turn out to be a tag.
 * Whitespace around the reasoning and at the start of the answer is trimmed, as a reader expects.
 *
 * DeepSeek-R1 distills behind vLLM or Ollama often start straight with the reasoning and only
 * close it with `</think>` (their chat template opened the tag). A splitter made with
 * `startsInReasoning` reads such text as reasoning until the closing tag; without it, a closing tag
 * that was never opened is still never shown: the whole text before it is reasoning when the text
 * is complete (`splitThink`), and when streaming, where that text has already gone out as answer,
 * the tag itself is dropped.
 */
const OPEN = '<think>'
const CLOSE = '</think>'

export interface ThinkParts {
  reasoning: string
  content: string
}

type Mode = 'start' | 'reasoning' | 'answer' | 'plain' | 'unopened'

/** Length of the longest proper prefix of `tag` that `text` ends with. */
function partialTagAtEnd(text: string, tag: string): number {
  for (let k = Math.min(tag.length - 1, text.length); k > 0; k--) if (text.endsWith(tag.slice(0, k))) return k
  return 0
}

export interface ThinkOptions {
  /** The text starts inside the reasoning: no opening tag will come (R1 distills). */
  startsInReasoning?: boolean
}

export class ThinkSplitter {
  #mode: Mode = 'start'
  #held = ''
  #reasoningStarted = false
  /** The last few characters of answer text, to see an opening tag cut between two pieces. */
  #tail = ''
  #startsInReasoning: boolean

  constructor(options: ThinkOptions = {}) {
    this.#startsInReasoning = options.startsInReasoning ?? false
  }

  /**
   * The upstream sends its reasoning in a field of its own (a reasoning parser is on): then the
   * text does not start inside the reasoning, whatever the model's name suggested; a `<think>`
   * block in it is still split out.
   */
  reasoningIsSeparate() {
    if (!this.#startsInReasoning) return
    this.#startsInReasoning = false
    if (this.#mode === 'reasoning' && !this.#reasoningStarted) {
      const held = this.#held
      this.#held = ''
      this.#mode = 'start'
      this.#feed(held, { reasoning: '', content: '' })
    }
  }

  /** Feeds the next piece of text; returns what can be classified now. */
  push(text: string): ThinkParts {
    const out: ThinkParts = { reasoning: '', content: '' }
    this.#feed(text, out)
    return out
  }

  /** The text is complete: releases whatever was held back. */
  end(): ThinkParts {
    const out: ThinkParts = { reasoning: '', content: '' }
    if (this.#mode === 'start' || this.#mode === 'unopened') out.content = this.#held
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
        } else if (this.#startsInReasoning) {
          const held = this.#held
          this.#held = ''
          this.#mode = 'reasoning'
          this.#feed(held, out)
        } else {
          const held = this.#held
          this.#held = ''
          this.#mode = 'unopened'
          this.#feed(held, out)
        }
        return
      }
      case 'unopened': {
        // Answer text, in which a closing tag nobody opened is dropped (see the top of this file).
        // An answer that opens a tag itself (quoting one) keeps its tags.
        const seen = this.#tail + this.#held + text
        this.#tail = seen.slice(-(OPEN.length - 1))
        if (seen.includes(OPEN)) {
          this.#mode = 'plain'
          out.content += this.#held + text
          this.#held = ''
          return
        }
        this.#held += text
        const close = this.#held.indexOf(CLOSE)
        if (close >= 0) {
          out.content += this.#held.slice(0, close).trimEnd()
          const after = this.#held.slice(close + CLOSE.length)
          this.#held = ''
          this.#mode = 'answer'
          this.#feed(after, out)
          return
        }
        const keep = partialTagAtEnd(this.#held, CLOSE)
        out.content += this.#held.slice(0, this.#held.length - keep)
        this.#held = this.#held.slice(this.#held.length - keep)
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

/**
 * Splits a complete text at once (the non-streamed answer): the same rules as streaming, except
 * that a closing tag nobody opened makes everything before it reasoning, since nothing has gone
 * out yet; and text that never closes its implicit reasoning is all answer.
 */
export function splitThink(text: string, options: ThinkOptions = {}): ThinkParts {
  const lead = text.trimStart()
  const opened = lead.startsWith(OPEN)
  const close = text.indexOf(CLOSE)
  const loneClose = !opened && close >= 0 && !text.slice(0, close).includes(OPEN)
  const splitter = new ThinkSplitter({ startsInReasoning: loneClose || (options.startsInReasoning === true && close >= 0) })
  const first = splitter.push(text)
  const last = splitter.end()
  return { reasoning: first.reasoning + last.reasoning, content: first.content + last.content }
}
