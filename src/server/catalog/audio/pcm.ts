/**
 * Mono 16-bit PCM in and out: Flite's WAV read, WAV and MP3 (lamejs) written, and the sample rate
 * and duration of a stored file measured again when it is reused.
 */
import { Mp3Encoder } from '@breezystack/lamejs'
import type { SpeechFormat } from '../../../shared/schemas/speech.js'

export interface Pcm {
  samples: Int16Array
  sampleRate: number
}

export interface EncodedAudio {
  data: Uint8Array
  sampleRate: number
  durationMs: number
}

const ascii = (bytes: Uint8Array, at: number) => String.fromCharCode(...bytes.subarray(at, at + 4))

/** The samples of a mono 16-bit PCM RIFF/WAVE file (what Flite writes); throws on anything else. */
export function parseWav(bytes: Uint8Array): Pcm {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length < 12 || ascii(bytes, 0) !== 'RIFF' || ascii(bytes, 8) !== 'WAVE') throw new Error('not a RIFF/WAVE file')
  let sampleRate = 0
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = ascii(bytes, at)
    const size = view.getUint32(at + 4, true)
    const body = at + 8
    if (id === 'fmt ') {
      const format = view.getUint16(body, true)
      const channels = view.getUint16(body + 2, true)
      const bits = view.getUint16(body + 14, true)
      if (format !== 1 || channels !== 1 || bits !== 16) throw new Error(`unexpected WAV format ${format}/${channels}ch/${bits}bit`)
      sampleRate = view.getUint32(body + 4, true)
    } else if (id === 'data') {
      if (!sampleRate) throw new Error('WAV data before its format')
      const length = Math.min(size, bytes.length - body) >> 1
      const samples = new Int16Array(length)
      for (let i = 0; i < length; i++) samples[i] = view.getInt16(body + i * 2, true)
      return { samples, sampleRate }
    }
    at = body + size + (size & 1)
  }
  throw new Error('WAV without a data chunk')
}

const durationOf = ({ samples, sampleRate }: Pcm) => Math.round((samples.length * 1000) / sampleRate)

/** A canonical 44-byte-header WAV: PCM, mono, 16-bit. */
export function encodeWav(pcm: Pcm): EncodedAudio {
  const dataBytes = pcm.samples.length * 2
  const out = new Uint8Array(44 + dataBytes)
  const view = new DataView(out.buffer)
  const tag = (at: number, text: string) => out.set([...text].map((c) => c.charCodeAt(0)), at)
  tag(0, 'RIFF')
  view.setUint32(4, 36 + dataBytes, true)
  tag(8, 'WAVE')
  tag(12, 'fmt ')
  view.setUint32(16, 16, true)
  view.setUint16(20, 1, true) // PCM
  view.setUint16(22, 1, true) // mono
  view.setUint32(24, pcm.sampleRate, true)
  view.setUint32(28, pcm.sampleRate * 2, true)
  view.setUint16(32, 2, true)
  view.setUint16(34, 16, true)
  tag(36, 'data')
  view.setUint32(40, dataBytes, true)
  for (let i = 0; i < pcm.samples.length; i++) view.setInt16(44 + i * 2, pcm.samples[i], true)
  return { data: out, sampleRate: pcm.sampleRate, durationMs: durationOf(pcm) }
}

/** Speech needs little: 32 kbit/s at 8 kHz, 48 above (MPEG-2/2.5 rates for the voices' 8-22 kHz). */
const bitrateFor = (sampleRate: number) => (sampleRate <= 8000 ? 32 : 48)

/** MP3 (lamejs, pure JavaScript), mono at the voice's own sample rate. */
export function encodeMp3(pcm: Pcm): EncodedAudio {
  const encoder = new Mp3Encoder(1, pcm.sampleRate, bitrateFor(pcm.sampleRate))
  const parts: Uint8Array[] = []
  const BLOCK = 1152 * 16
  for (let at = 0; at < pcm.samples.length; at += BLOCK) {
    const chunk = encoder.encodeBuffer(pcm.samples.subarray(at, at + BLOCK))
    if (chunk.length) parts.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length))
  }
  const tail = encoder.flush()
  if (tail.length) parts.push(new Uint8Array(tail.buffer, tail.byteOffset, tail.length))
  const data = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    data.set(part, at)
    at += part.length
  }
  // Measured from the frames (the encoder pads the end), as a reused stored file is measured.
  return { data, sampleRate: pcm.sampleRate, durationMs: measureMp3(data).durationMs }
}

export function encodeAudio(pcm: Pcm, format: SpeechFormat): EncodedAudio {
  return format === 'mp3' ? encodeMp3(pcm) : encodeWav(pcm)
}

// MPEG audio Layer III: bitrates (kbit/s) by version and index, and sample rates by version.
const MP3_BITRATES = {
  v1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
}
const MP3_RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] }

/** Sample rate and duration of an MP3 by walking its frame headers (what a reused stored file reports). */
export function measureMp3(bytes: Uint8Array): { sampleRate: number; durationMs: number } {
  let samples = 0
  let sampleRate = 0
  for (let at = 0; at + 4 <= bytes.length; ) {
    const h = (bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]
    if ((h >>> 21) !== 0x7ff) {
      at++
      continue
    }
    const version = (h >>> 19) & 3
    const bitrateIndex = (h >>> 12) & 15
    const rateIndex = (h >>> 10) & 3
    const padding = (h >>> 9) & 1
    if (version === 1 || ((h >>> 17) & 3) !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) {
      at++
      continue
    }
    const rate = MP3_RATES[version][rateIndex]
    const kbps = (version === 3 ? MP3_BITRATES.v1 : MP3_BITRATES.v2)[bitrateIndex]
    const perFrame = version === 3 ? 1152 : 576
    const length = Math.floor(((perFrame / 8) * kbps * 1000) / rate) + padding
    sampleRate = rate
    samples += perFrame
    at += length
  }
  return { sampleRate, durationMs: sampleRate ? Math.round((samples * 1000) / sampleRate) : 0 }
}

/** Sample rate and duration of a stored WAV or MP3 file. */
export function measureAudio(bytes: Uint8Array, format: SpeechFormat): { sampleRate: number; durationMs: number } {
  if (format === 'mp3') return measureMp3(bytes)
  const pcm = parseWav(bytes)
  return { sampleRate: pcm.sampleRate, durationMs: durationOf(pcm) }
}
