import { Flags } from '@oclif/core'
import { PlazaCommand } from '../../base.js'

/** Completes `-m`/`--model` from `plaza util models`, and hands every other word to the autocomplete plugin's function. */
const COMPLETIONS: Record<'bash' | 'zsh', (bin: string) => string> = {
  bash: (bin) => `_${bin}_with_models() {
  local prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [[ "$prev" == "-m" || "$prev" == "--model" ]]; then
    COMPREPLY=( $(compgen -W "$(${bin} util models 2>/dev/null)" -- "\${COMP_WORDS[COMP_CWORD]}") )
    return 0
  fi
  _${bin}_autocomplete
}
complete -o default -F _${bin}_with_models ${bin}
`,
  zsh: (bin) => `_${bin}_with_models() {
  if [[ \${words[CURRENT-1]} == (-m|--model) ]]; then
    local -a models
    models=(\${(f)"$(${bin} util models 2>/dev/null)"})
    compadd -a models
  else
    _${bin} "$@"
  fi
}
compdef _${bin}_with_models ${bin}
`,
}

export default class UtilModels extends PlazaCommand<typeof UtilModels> {
  static override description = `List the model names the chat gateway serves: its own names (the spec's aliases, the names of the provider file), then what each provider's models endpoint lists (bare for the PLAZA_LLM_BASE_URL provider, provider/model for the others).

One name a line; --json prints each with the provider that owns it. With --url, asks that server (GET /api/v1/models, sending PLAZA_GATEWAY_KEY when its gateway requires a key); without it, the gateway of this environment's PLAZA_LLM_* settings.
--completion bash|zsh prints a shell function that completes plaza util chat -m from this list (after the autocomplete plugin's setup: eval "$(plaza util models --completion zsh)").`

  static override examples = [
    '<%= config.bin %> util models',
    '<%= config.bin %> util models --url http://127.0.0.1:8080 --json',
    'eval "$(<%= config.bin %> util models --completion bash)"',
  ]

  static override flags = {
    completion: Flags.string({ description: 'print the completion function of this shell for plaza util chat -m', options: ['bash', 'zsh'] }),
  }

  async run(): Promise<Array<{ id: string; owned_by: string }> | void> {
    if (this.flags.completion) {
      process.stdout.write(COMPLETIONS[this.flags.completion as 'bash' | 'zsh'](this.config.bin))
      return
    }
    const { openChatBackend } = await import('../../ui/chat-backend.js')
    const backend = await openChatBackend(this.target)
    try {
      const models = await backend.models()
      if (!this.jsonEnabled()) for (const model of models) this.log(model.id)
      return models
    } finally {
      await backend.close()
    }
  }
}
