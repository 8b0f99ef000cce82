/**
 * Reads what the speech operations answer, independently of the server's own code: a WAV's header
 * and samples, loudness (RMS), and an MP3's frames (sync bytes, header fields, duration).
 */
export interface Wav {
  format: number
  channels: number
  sampleRate: number
  bitsPerSample: number
  samples: Int16Array
  durationMs: number
}

const tag = (bytes: Buffer, at: number) => bytes.toString('latin1', at, at + 4)

/** Parses a RIFF/WAVE file's `fmt ` and `data` chunks; throws when either is missing or malformed. */
export function parseWav(bytes: Buffer): Wav {
  if (tag(bytes, 0) !== 'RIFF' || tag(bytes, 8) !== 'WAVE') throw new Error('not RIFF/WAVE')
  if (bytes.readUInt32LE(4) !== bytes.length - 8) throw new Error(`RIFF size ${bytes.readUInt32LE(4)} for ${bytes.length} bytes`)
  let fmt: Omit<Wav, 'samples' | 'durationMs'> | undefined
  for (let at = 12; at + 8 <= bytes.length; ) {
    const size = bytes.readUInt32LE(at + 4)
    if (tag(bytes, at) === 'fmt ') {
      fmt = { format: bytes.readUInt16LE(at + 8), channels: bytes.readUInt16LE(at + 10), sampleRate: bytes.readUInt32LE(at + 12), bitsPerSample: bytes.readUInt16LE(at + 22) }
    } else if (tag(bytes, at) === 'data') {
      if (!fmt) throw new Error('data before fmt')
      if (at + 8 + size !== bytes.length) throw new Error('data chunk does not end the file')
      const samples = new Int16Array(size / 2)
      for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(at + 8 + i * 2)
      return { ...fmt, samples, durationMs: (samples.length * 1000) / fmt.sampleRate }
    }
    at += 8 + size + (size & 1)
  }
  throw new Error('no data chunk')
}

/** Root mean square of the samples, 0 (silence) to 32767. */
export function rms(samples: Int16Array): number {
  let sum = 0
  for (const sample of samples) sum += sample * sample
  return Math.sqrt(sum / Math.max(1, samples.length))
}

export interface Mp3 {
  frames: number
  sampleRate: number
  /** The MPEG version of the first frame: 1, 2 or 2.5. */
  version: number
  channels: number
  durationMs: number
}

const BITRATES_V1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
const BITRATES_V2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
const RATES: Record<number, number[]> = { 1: [44100, 48000, 32000], 2: [22050, 24000, 16000], 2.5: [11025, 12000, 8000] }

/**
 * Walks an MP3 (Layer III) from its first byte, frame after frame: every frame must start with the
 * 11-bit sync and carry the same version and rate, and the frames must end exactly at the end of
 * the file. A lone ID3 tag at the start is skipped.
 */
export function parseMp3(bytes: Buffer): Mp3 {
  let at = tag(bytes, 0).startsWith('ID3') ? 10 + ((bytes[6] << 21) | (bytes[7] << 14) | (bytes[8] << 7) | bytes[9]) : 0
  let frames = 0
  let first: { version: number; sampleRate: number; channels: number } | undefined
  while (at < bytes.length) {
    if (at + 4 > bytes.length) throw new Error(`${bytes.length - at} stray bytes at the end`)
    if (bytes[at] !== 0xff || (bytes[at + 1] & 0xe0) !== 0xe0) throw new Error(`no frame sync at byte ${at} of ${bytes.length}`)
    const versionBits = (bytes[at + 1] >> 3) & 3
    const layer = (bytes[at + 1] >> 1) & 3
    if (versionBits === 1 || layer !== 1) throw new Error(`not MPEG Layer III at byte ${at}`)
    const version = versionBits === 3 ? 1 : versionBits === 2 ? 2 : 2.5
    const bitrate = (version === 1 ? BITRATES_V1 : BITRATES_V2)[bytes[at + 2] >> 4]
    const sampleRate = RATES[version][(bytes[at + 2] >> 2) & 3]
    const padding = (bytes[at + 2] >> 1) & 1
    const channels = bytes[at + 3] >> 6 === 3 ? 1 : 2
    if (!bitrate || !sampleRate) throw new Error(`bad bitrate or rate at byte ${at}`)
    first ??= { version, sampleRate, channels }
    if (first.sampleRate !== sampleRate || first.version !== version) throw new Error(`frame ${frames} changes rate`)
    at += Math.floor(((version === 1 ? 144 : 72) * bitrate * 1000) / sampleRate) + padding
    frames++
  }
  if (!first) throw new Error('no frames')
  if (at !== bytes.length) throw new Error(`the last frame runs ${at - bytes.length} bytes past the end`)
  const perFrame = first.version === 1 ? 1152 : 576
  return { frames, ...first, durationMs: (frames * perFrame * 1000) / first.sampleRate }
}
