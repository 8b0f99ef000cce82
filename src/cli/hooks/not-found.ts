/**
 * oclif's `command_not_found` hook: one line, `Error: unknown command "social fed": did you mean
 * "plaza social feed"?`, exit 2 (a usage error, as before). Candidates are every visible command
 * and topic; the nearest by edit distance is offered when it is close enough to be a typo.
 */
import type { Hook } from '@oclif/core'
import { distance } from 'fastest-levenshtein'
import { printError } from '../errors.js'

/** The nearest of `candidates` to `wanted`, when the edits fit in its last word (2, or a third of a longer word). */
export function nearest(wanted: string, candidates: Iterable<string>): string | undefined {
  let best: { id: string; cost: number } | undefined
  for (const id of candidates) {
    const cost = distance(wanted, id)
    if (!best || cost < best.cost || (cost === best.cost && id.length < best.id.length)) best = { id, cost }
  }
  const allowed = Math.max(2, Math.floor((wanted.split(':').pop() ?? '').length / 3))
  return best && best.cost <= allowed ? best.id : undefined
}

const hook: Hook.CommandNotFound = async function ({ id, config }) {
  const separator = config.topicSeparator
  const shown = (commandId: string) => commandId.replaceAll(':', separator)
  const candidates = new Set<string>()
  for (const command of config.commands) if (!command.hidden) candidates.add(command.id)
  for (const topic of config.topics) if (!topic.hidden) candidates.add(topic.name)
  // Compare the typed words with ids of as many words (`social fed` with `social feed`, `socail` with `social`);
  // once a leading part is an exact topic, the mistake is past it: point at that topic's help.
  const words = id.split(':')
  let hint = `see \`${config.bin} --help\``
  for (let n = words.length; n > 0; n--) {
    const typed = words.slice(0, n).join(':')
    if (n < words.length && candidates.has(typed)) {
      hint = `see \`${config.bin} ${shown(typed)} --help\``
      break
    }
    const suggestion = nearest(typed, [...candidates].filter((candidate) => candidate.split(':').length === n))
    if (suggestion) {
      hint = `did you mean "${config.bin} ${shown(suggestion)}"?`
      break
    }
  }
  printError(`unknown command "${shown(id)}": ${hint}`, 2)
}

export default hook
