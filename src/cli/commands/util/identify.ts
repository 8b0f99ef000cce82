import { Args, Flags } from '@oclif/core'
import type { IdentifyAnswer } from '../../../shared/schemas/searchops.js'
import { PlazaCommand } from '../../base.js'

export default class UtilIdentify extends PlazaCommand<typeof UtilIdentify> {
  static override description = `Identify the song in a recording (GET or POST /api/identify, AudD protocol; docs/search.md).

Give a public http(s) URL of the audio (the provider fetches it) or --file PATH (sent to the provider; at most 10 MiB). Without --url, the AudD provider of this environment (PLAZA_AUDD_API_KEY); with --url, the server's.`
  static override examples = ['<%= config.bin %> util identify https://example.com/clip.mp3', '<%= config.bin %> util identify --file recording.m4a --json', '<%= config.bin %> util identify --file clip.wav --url http://127.0.0.1:8080']
  static override args = {
    audio: Args.string({ description: 'public http(s) URL of the audio (or use --file)' }),
  }
  static override flags = {
    file: Flags.string({ char: 'f', description: 'a local audio file to send instead of a URL' }),
  }

  async run(): Promise<IdentifyAnswer> {
    const { formatIdentify, runIdentify } = await import('../../searchops.js')
    const answer = await runIdentify(this.target, { url: this.args.audio, file: this.flags.file })
    this.human(formatIdentify(answer))
    return answer
  }
}
