/**
 * The upstream model behind each built-in name (the spec's aliases, the fixed operations and the
 * catalog's gateway aliases) when the operator maps none: an alias never goes upstream as itself,
 * since no real provider knows `modelg-4o-mini`. One column per protocol, as a provider of that
 * protocol names its models; `PLAZA_LLM_MODEL` or the provider file's `models:` override it
 * (docs/chat.md, "Model names").
 */
import type { ProviderType } from './config.js'

const HAIKU = 'claude-3-5-haiku-20241022'
const SONNET = 'claude-3-5-sonnet-20241022'
const SONNET_37 = 'claude-3-7-sonnet-20250219'

/** Built-in name → [OpenAI-compatible model, Anthropic model]. */
const TABLE: Record<string, [openai: string, anthropic: string]> = {
  'modelg-4o-mini': ['gpt-4o-mini', HAIKU],
  'o1-preview': ['o1-preview', SONNET_37],
  'o1-mini': ['o1-mini', HAIKU],
  'modelg-4-turbo-2024-04-09': ['gpt-4-turbo-2024-04-09', SONNET],
  'modelg-4o-2024-08-06': ['gpt-4o-2024-08-06', SONNET],
  'modelx-2': ['grok-2', SONNET],
  'modelx-2-mini': ['grok-2-mini', HAIKU],
  'modelc-3-opus-20240229': ['claude-3-opus-20240229', 'claude-3-opus-20240229'],
  'modelc-3-sonnet-20240229': ['claude-3-sonnet-20240229', 'claude-3-sonnet-20240229'],
  'modelc-3-5-sonnet-20240620': ['claude-3-5-sonnet-20240620', 'claude-3-5-sonnet-20240620'],
  'modelc-3-5-sonnet-20241022': ['claude-3-5-sonnet-20241022', 'claude-3-5-sonnet-20241022'],
  'modelc-3-5-sonnet-20241022-t': ['claude-3-5-sonnet-20241022', 'claude-3-5-sonnet-20241022'],
  'modelc-3-haiku-20240307': ['claude-3-haiku-20240307', 'claude-3-haiku-20240307'],
  chaty: ['gpt-4o-mini', HAIKU],
  'reasoning-70b': ['deepseek-ai/DeepSeek-R1-Distill-Llama-70B', SONNET_37],
  copilot: ['gpt-4o', SONNET],
  'llama-70b': ['meta-llama/Llama-3.3-70B-Instruct', SONNET],
  'reasoning-small': ['o3-mini', HAIKU],
  gpt: ['gpt-4o-mini', HAIKU],
  coder: ['gpt-4o', SONNET],
  chat: ['gpt-4o-mini', HAIKU],
  online: ['gpt-4o-mini', HAIKU],
}

/** The model a provider of this protocol is asked for when a client names a built-in name and nothing maps it. */
export function defaultUpstreamModel(name: string, type: ProviderType): string | undefined {
  const row = TABLE[name]
  return row && (type === 'anthropic' ? row[1] : row[0])
}
