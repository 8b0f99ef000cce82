import { Args, Flags } from '@oclif/core'
import { PROVIDER_SPEECH_ENGINES, PROVIDER_SPEECH_MIME } from '../../../shared/schemas/speech-providers.js'
import { FLITE_VOICE_NAMES, SPEECH_ENGINES, SPEECH_TEXT_MAX } from '../../../shared/schemas/speech.js'
import { PROVIDER_SPEECH_TEXT_MAX } from '../../../shared/schemas/speech-providers.js'
import { PlazaCommand } from '../../base.js'
import type { SpeechCommandOutput } from '../../speech.js'

export default class UtilTts extends PlazaCommand<typeof UtilTts> {
  static override description = `Speak a text to an audio file with Flite or eSpeak NG, or a speech provider (GET /api/tts/flite, /api/tts/espeak, /api/tts/openai, /api/tts/elevenlabs, /api/tts/polly, /api/tts/azure; docs/speech.md). Plays nothing: prints the file's path.

With --url the server synthesises; without, the engine runs here (a provider engine through this environment's PLAZA_SPEECH_*, PLAZA_ELEVENLABS_*, PLAZA_POLLY_* or PLAZA_AZURE_SPEECH_* settings). TEXT is at most ${SPEECH_TEXT_MAX} characters for flite and espeak (and 90 s of speech), ${PROVIDER_SPEECH_TEXT_MAX} for a provider.

Flite voices: ${FLITE_VOICE_NAMES.join(', ')}. eSpeak NG (an optional package: npm install @echogarden/espeak-ng-emscripten) takes a language such as en, en-us, fr, de, es. Provider voices are the provider's (alloy, JBFqnCBsd6RMkjVDRZzb, Joanna, en-US-AvaMultilingualNeural).`
  static override examples = [
    '<%= config.bin %> util tts "Hello from Plaza"',
    '<%= config.bin %> util tts "Bonjour tout le monde" --engine espeak --voice fr --format mp3 -o bonjour.mp3',
    '<%= config.bin %> util tts "Remote speech" --voice kal --url http://127.0.0.1:8080 --json',
    '<%= config.bin %> util tts "Hello from a provider" --engine openai --voice nova --format flac -o hello.flac',
    '<%= config.bin %> util tts "Guten Tag" --engine azure --voice de-DE-KatjaNeural --url http://127.0.0.1:8080 --json',
  ]
  static override args = {
    text: Args.string({ description: 'the text to speak', required: true }),
  }
  static override flags = {
    engine: Flags.string({ description: 'speech engine', options: [...SPEECH_ENGINES, ...PROVIDER_SPEECH_ENGINES], default: 'flite' }),
    voice: Flags.string({ description: "voice: a Flite voice name, an eSpeak NG language/voice id, or the provider's voice" }),
    format: Flags.string({ description: 'audio format (default wav for flite and espeak, mp3 for the providers)', options: Object.keys(PROVIDER_SPEECH_MIME) }),
    model: Flags.string({ description: "--engine openai: the upstream model (default the server's PLAZA_SPEECH_MODEL, else tts-1)" }),
    speed: Flags.string({ description: '--engine openai: 0.25 to 4 (default 1)' }),
    output: Flags.string({ char: 'o', description: 'where to write the audio (- for stdout); default: speech.<format>' }),
  }

  async run(): Promise<SpeechCommandOutput> {
    const { runSpeechCommand } = await import('../../speech.js')
    const { engine, voice, format, model, speed, output } = this.flags
    const result = await runSpeechCommand(this.target, { engine: engine as SpeechCommandOutput['engine'], text: this.args.text, voice, format, model, speed }, output)
    if (result.output !== '-') this.human(result.output)
    return result
  }
}
