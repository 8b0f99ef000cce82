import { Args, Flags } from '@oclif/core'
import type { IdentifyAnswer } from '../../../shared/schemas/searchops.js'
import { PlazaCommand, UsageError } from '../../base.js'

export default class UtilIdentify extends PlazaCommand<typeof UtilIdentify> {
  static override description = `Identify the song in a recording (GET or POST /api/identify, AudD protocol; docs/search.md).

Give a public http(s) URL of the audio (the provider fetches it), or a local file as AUDIO or --file PATH (sent to the provider; at most 10 MiB). Without --url, the AudD provider of this environment (PLAZA_AUDD_API_KEY); with --url, the server's.`
  static override examples = ['<%= config.bin %> util identify https://example.com/clip.mp3', '<%= config.bin %> util identify recording.m4a --json', '<%= config.bin %> util identify --file clip.wav --url http://127.0.0.1:8080']
  static override args = {
    audio: Args.string({ description: 'public http(s) URL of the audio, or a local file' }),
  }
  static override flags = {
    file: Flags.string({ char: 'f', description: 'a local audio file to send instead of a URL' }),
  }

  async run(): Promise<IdentifyAnswer> {
    const { formatIdentify, runIdentify } = await import('../../searchops.js')
    const { audio } = this.args
    // A local file where a URL may go is sent, as --file is.
    const local = audio !== undefined && !/^https?:\/\//i.test(audio)
    if (local && this.flags.file !== undefined) throw new UsageError('give the audio once: as AUDIO (a URL or a file) or as --file PATH')
    const answer = await runIdentify(this.target, local ? { file: audio } : { url: audio, file: this.flags.file })
    this.human(formatIdentify(answer))
    return answer
  }
}
