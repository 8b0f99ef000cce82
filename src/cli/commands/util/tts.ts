import { Args, Flags } from '@oclif/core'
import { FLITE_VOICE_NAMES, SPEECH_ENGINES, SPEECH_FORMATS, SPEECH_TEXT_MAX } from '../../../shared/schemas/speech.js'
import { PlazaCommand } from '../../base.js'
import type { SpeechCommandOutput } from '../../speech.js'

export default class UtilTts extends PlazaCommand<typeof UtilTts> {
  static override description = `Speak a text to an audio file with Flite or eSpeak NG (GET /api/tts/flite, /api/tts/espeak; docs/speech.md). Plays nothing: prints the file's path.

With --url the server synthesises; without, the engine runs here. TEXT is at most ${SPEECH_TEXT_MAX} characters.

Flite voices: ${FLITE_VOICE_NAMES.join(', ')}. eSpeak NG (an optional package: npm install @echogarden/espeak-ng-emscripten) takes a language such as en, en-us, fr, de, es.`
  static override examples = [
    '<%= config.bin %> util tts "Hello from Plaza"',
    '<%= config.bin %> util tts "Bonjour tout le monde" --engine espeak --voice fr --format mp3 -o bonjour.mp3',
    '<%= config.bin %> util tts "Remote speech" --voice kal --url http://127.0.0.1:8080 --json',
  ]
  static override args = {
    text: Args.string({ description: 'the text to speak', required: true }),
  }
  static override flags = {
    engine: Flags.string({ description: 'speech engine', options: [...SPEECH_ENGINES], default: 'flite' }),
    voice: Flags.string({ description: 'voice: a Flite voice name, or an eSpeak NG language/voice id' }),
    format: Flags.string({ description: 'audio format', options: [...SPEECH_FORMATS], default: 'wav' }),
    output: Flags.string({ char: 'o', description: 'where to write the audio (- for stdout); default: speech.wav or speech.mp3' }),
  }

  async run(): Promise<SpeechCommandOutput> {
    const { runSpeechCommand } = await import('../../speech.js')
    const { engine, voice, format, output } = this.flags
    const result = await runSpeechCommand(this.target, { engine: engine as SpeechCommandOutput['engine'], text: this.args.text, voice, format: format as SpeechCommandOutput['format'] }, output)
    if (result.output !== '-') this.human(result.output)
    return result
  }
}
