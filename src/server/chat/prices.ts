/**
 * What a call costs: a price table in US dollars per million tokens (input, output, and cached
 * input), by upstream model, with list prices of common models built in and the provider file's
 * `prices:` over them. Costs are kept in nano-dollars (billionths of a dollar), whole numbers, so
 * sums and budgets are exact; a call of a model without a price costs 0.
 */
import type { ChatUsage } from '../../shared/schemas/chat.js'

export interface Price {
  /** Dollars per million prompt tokens (those not read from the provider's cache). */
  input: number
  /** Dollars per million completion tokens. */
  output: number
  /** Dollars per million prompt tokens read from the provider's cache (the input price when unset). */
  cachedInput?: number
}

/** List prices in USD per million tokens (OpenAI, Anthropic, xAI, DeepSeek, Groq pages, 2025). */
export const DEFAULT_PRICES: Readonly<Record<string, Price>> = {
  'gpt-4o-mini': { input: 0.15, output: 0.6, cachedInput: 0.075 },
  'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 },
  'gpt-4o-2024-05-13': { input: 5, output: 15 },
  'gpt-4-turbo': { input: 10, output: 30 },
  'gpt-4': { input: 30, output: 60 },
  'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
  'gpt-4.1': { input: 2, output: 8, cachedInput: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cachedInput: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cachedInput: 0.025 },
  'gpt-5': { input: 1.25, output: 10, cachedInput: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cachedInput: 0.025 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cachedInput: 0.005 },
  o1: { input: 15, output: 60, cachedInput: 7.5 },
  'o1-preview': { input: 15, output: 60, cachedInput: 7.5 },
  'o1-mini': { input: 1.1, output: 4.4, cachedInput: 0.55 },
  o3: { input: 2, output: 8, cachedInput: 0.5 },
  'o3-mini': { input: 1.1, output: 4.4, cachedInput: 0.55 },
  'o4-mini': { input: 1.1, output: 4.4, cachedInput: 0.275 },
  'text-embedding-3-small': { input: 0.02, output: 0 },
  'text-embedding-3-large': { input: 0.13, output: 0 },
  'text-embedding-ada-002': { input: 0.1, output: 0 },
  'claude-3-haiku': { input: 0.25, output: 1.25, cachedInput: 0.03 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cachedInput: 0.08 },
  'claude-haiku-4-5': { input: 1, output: 5, cachedInput: 0.1 },
  'claude-3-sonnet': { input: 3, output: 15, cachedInput: 0.3 },
  'claude-3-5-sonnet': { input: 3, output: 15, cachedInput: 0.3 },
  'claude-3-7-sonnet': { input: 3, output: 15, cachedInput: 0.3 },
  'claude-sonnet-4': { input: 3, output: 15, cachedInput: 0.3 },
  'claude-3-opus': { input: 15, output: 75, cachedInput: 1.5 },
  'claude-opus-4': { input: 15, output: 75, cachedInput: 1.5 },
  'grok-2': { input: 2, output: 10 },
  'grok-3': { input: 3, output: 15 },
  'grok-3-mini': { input: 0.3, output: 0.5 },
  'deepseek-chat': { input: 0.27, output: 1.1, cachedInput: 0.07 },
  'deepseek-reasoner': { input: 0.55, output: 2.19, cachedInput: 0.14 },
  'llama-3.3-70b-versatile': { input: 0.59, output: 0.79 },
  'deepseek-r1-distill-llama-70b': { input: 0.75, output: 0.99 },
}

export interface PriceTable {
  /** The price of an upstream model, or undefined when neither the file nor the built-in table has one. */
  of(provider: string, model: string): Price | undefined
  /** What a call cost, in nano-dollars (0 without a price or without usage). */
  cost(provider: string, model: string, usage: ChatUsage | undefined): number
}

/**
 * Names as providers write them: `openai/gpt-4o-mini` (OpenRouter), `gpt-4o-mini-2024-07-18`
 * (a dated snapshot), `claude-3-5-haiku-latest`. Tried in turn: the name, without a vendor
 * prefix, then the longest table name it starts with followed by `-` (so `gpt-4o-mini-2024-07-18`
 * is `gpt-4o-mini`, never `gpt-4o`).
 */
function lookup(table: Map<string, Price>, model: string): Price | undefined {
  const lower = model.toLowerCase()
  const exact = table.get(lower)
  if (exact) return exact
  const bare = lower.slice(lower.lastIndexOf('/') + 1)
  const found = table.get(bare)
  if (found) return found
  let best: string | undefined
  for (const name of table.keys()) if (bare.startsWith(name + '-') && (!best || name.length > best.length)) best = name
  return best === undefined ? undefined : table.get(best)
}

/** The table: the built-in prices, the file's `prices:` over them (keys are upstream models, or `provider/model` for one provider's). */
export function createPriceTable(overrides: Record<string, Price> = {}): PriceTable {
  const table = new Map<string, Price>()
  for (const [name, price] of Object.entries(DEFAULT_PRICES)) table.set(name, price)
  for (const [name, price] of Object.entries(overrides)) table.set(name.toLowerCase(), price)
  // The same model's price is asked for on every call: remembered (bounded, as names come from clients).
  const memo = new Map<string, Price | null>()
  const of = (provider: string, model: string): Price | undefined => {
    const key = `${provider}\u0000${model}`
    let price = memo.get(key)
    if (price === undefined) {
      price = table.get(`${provider}/${model}`.toLowerCase()) ?? lookup(table, model) ?? null
      if (memo.size >= 10_000) memo.clear()
      memo.set(key, price)
    }
    return price ?? undefined
  }
  return {
    of,
    cost(provider, model, usage) {
      if (!usage) return 0
      const price = of(provider, model)
      if (!price) return 0
      const cached = Math.min(usage.prompt_tokens_details?.cached_tokens ?? 0, usage.prompt_tokens)
      // Dollars per million tokens are nano-dollars per thousandth of a token: × 1000 per token.
      const nanos = (usage.prompt_tokens - cached) * price.input * 1000 + cached * (price.cachedInput ?? price.input) * 1000 + usage.completion_tokens * price.output * 1000
      return Math.round(nanos)
    },
  }
}

/** Nano-dollars as dollars, for answers and tables. */
export function dollars(nanos: number): number {
  return nanos / 1e9
}
