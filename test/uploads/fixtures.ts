/** Real media bytes built in the test (sharp for images, ffmpeg or hand-made container headers for video) and upload helpers. */
import { execFile } from 'node:child_process'
import http from 'node:http'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg'
import { crc32, deflateSync } from 'node:zlib'
import sharp from 'sharp'
import type { TestServer } from '../helpers/server.js'

export const MiB = 1024 * 1024

/** A JPEG whose EXIF carries a camera make, GPS coordinates and orientation 6 (stored sideways, shown rotated 90°), plus XMP. */
export async function jpegWithGps(width = 400, height = 200): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 40 } } })
    .jpeg({ quality: 90 })
    .withMetadata({ orientation: 6 })
    .withExif({
      IFD0: { Make: 'PlazaCam', Model: 'SecretPhone' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '51/1 30/1 1234/100', GPSLongitudeRef: 'W', GPSLongitude: '0/1 7/1 3924/100' },
    })
    .withXmp('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:creator>XmpSecretAuthor</dc:creator></rdf:Description></rdf:RDF></x:xmpmeta>')
    .toBuffer()
}

/** A noisy image, so encoders cannot shrink it to nothing and the result is a realistic photo-sized file. */
export async function noisyImage(width: number, height: number, format: 'jpeg' | 'png' | 'webp' = 'jpeg'): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3)
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 2654435761) >>> 24
  return sharp(raw, { raw: { width, height, channels: 3 } })[format]().toBuffer()
}

export async function solidImage(width: number, height: number, format: 'jpeg' | 'png' | 'webp' | 'gif', alpha = false): Promise<Buffer> {
  const image = sharp({ create: { width, height, channels: alpha ? 4 : 3, background: { r: 20, g: 120, b: 220, alpha: alpha ? 0.5 : 1 } } })
  return image[format]().toBuffer()
}

/** A three-frame animated GIF. */
export async function animatedGif(width = 60, height = 40): Promise<Buffer> {
  const frames = await Promise.all(
    ['red', 'lime', 'blue'].map((background) => sharp({ create: { width, height, channels: 3, background } }).png().toBuffer()),
  )
  return sharp(frames, { join: { animated: true } }).gif({ delay: [120, 120, 120], loop: 0 }).toBuffer()
}

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, 'latin1')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type, 'latin1'), data])) >>> 0, 0)
  return Buffer.concat([head, data, crc])
}

/** A valid PNG header claiming width × height pixels, followed by a few bytes of image data: a decompression bomb. */
export function pngBomb(width = 100_000, height = 100_000): Buffer {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.writeUInt8(8, 8) // bit depth
  ihdr.writeUInt8(2, 9) // truecolour
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(Buffer.alloc(1024))),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

/** An ISO BMFF box: `type` and `body` with their length. */
export function mp4Box(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(8 + body.length, 0)
  head.write(type, 4, 'latin1')
  return Buffer.concat([head, body])
}

/** Runs the same ffmpeg binary the server uses; resolves with its stderr (where it reports streams) and stdout. */
export async function ffmpeg(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(ffmpegInstaller.path, ['-nostdin', '-hide_banner', ...args], { maxBuffer: 16 * MiB })
}

/** Runs `inspect` on `bytes` written to a temporary file (ffmpeg reads files), then removes it. */
async function withFile<T>(bytes: Buffer, ext: string, inspect: (file: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(path.join(tmpdir(), 'plaza-fixture-'))
  try {
    const file = path.join(dir, `in.${ext}`)
    writeFileSync(file, bytes)
    return await inspect(file)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * A real one-second 320×240 test-pattern video with a sine tone, made by ffmpeg, carrying a GPS
 * position (QuickTime and Apple keys), a title and a chapter, like a phone's recording.
 */
export async function recordedVideo(container: 'mp4' | 'mov' | 'webm'): Promise<Buffer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'plaza-fixture-'))
  try {
    const file = path.join(dir, `clip.${container}`)
    const codecs = container === 'webm' ? ['-c:v', 'libvpx', '-b:v', '200k', '-c:a', 'libopus'] : ['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac']
    const secrets = ['-metadata', 'location=+48.8584+002.2945/', '-metadata', 'com.apple.quicktime.location.ISO6709=+48.8584+002.2945/', '-metadata', 'title=secret', '-metadata', 'make=SecretPhone']
    const tags = container === 'webm' ? [] : ['-movflags', '+use_metadata_tags']
    await ffmpeg([
      '-loglevel', 'error',
      '-f', 'lavfi', '-i', 'testsrc=duration=1:size=320x240:rate=10',
      '-f', 'lavfi', '-i', 'sine=duration=1',
      ...codecs, ...secrets, ...tags, file,
    ])
    return readFileSync(file)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The global metadata of a video as ffmpeg's `ffmetadata` dump (key=value lines). */
export function videoMetadata(bytes: Buffer, ext: string): Promise<string> {
  return withFile(bytes, ext, async (file) => (await ffmpeg(['-loglevel', 'error', '-i', file, '-f', 'ffmetadata', '-'])).stdout)
}

/**
 * Decodes every frame of a video: `errors` is what ffmpeg reported as errors (nothing for a file
 * that plays to the end), `streams` its description of the file's streams.
 */
export function decodeVideo(bytes: Buffer, ext: string): Promise<{ errors: string; streams: string[] }> {
  return withFile(bytes, ext, async (file) => {
    const { stderr: errors } = await ffmpeg(['-v', 'error', '-i', file, '-f', 'null', '-'])
    // With no output ffmpeg only describes the input, then exits with 1.
    const described = await ffmpeg(['-i', file]).catch((error: { stderr: string }) => error)
    return { errors, streams: described.stderr.split('\n').filter((line) => /^\s*Stream #0:\d/.test(line)).map((line) => line.trim()) }
  })
}

/** The start of an ISO BMFF (MP4) file: an `ftyp` box (brand isom) and an `mdat` box. */
export function minimalMp4(payload = 2048): Buffer {
  const ftyp = mp4Box('ftyp', Buffer.concat([Buffer.from('isom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2avc1mp41')]))
  return Buffer.concat([ftyp, mp4Box('free', Buffer.alloc(8)), mp4Box('mdat', Buffer.alloc(payload, 7))])
}

/** The start of a WebM file: an EBML header with DocType `webm`, then a Segment. */
export function minimalWebm(payload = 2048): Buffer {
  const body = Buffer.from([
    0x42, 0x86, 0x81, 0x01, 0x42, 0xf7, 0x81, 0x01, 0x42, 0xf2, 0x81, 0x04, 0x42, 0xf3, 0x81, 0x08,
    0x42, 0x82, 0x84, ...Buffer.from('webm'), 0x42, 0x87, 0x81, 0x04, 0x42, 0x85, 0x81, 0x02,
  ])
  const segment = Buffer.from([0x18, 0x53, 0x80, 0x67, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
  return Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x80 | body.length]), body, segment, Buffer.alloc(payload, 3)])
}

export function form(bytes: Buffer, filename = 'photo.jpg', type = 'image/jpeg', field = 'file'): FormData {
  const data = new FormData()
  data.append(field, new Blob([new Uint8Array(bytes)], { type }), filename)
  return data
}

/** POSTs a multipart form with `bytes` as the `file` field to /api/mobile/upload/<route>. */
export function upload(server: TestServer, route: string, token: string | undefined, bytes: Buffer, filename?: string, type?: string) {
  return server.request('POST', `/api/mobile/upload/${route}`, { token, raw: form(bytes, filename, type) })
}

/** Downloads a stored file and decodes it with sharp. */
export async function fetchStored(server: TestServer, storedPath: string) {
  const res = await server.request('GET', '/' + storedPath)
  if (res.status !== 200) throw new Error(`GET /${storedPath}: ${res.status}`)
  const bytes = res.body as Buffer
  return { res, bytes, meta: await sharp(bytes, { animated: true }).metadata() }
}

/**
 * A GET with the path sent exactly as written (fetch and URL would normalise `..` and `\`).
 * Resolves with the status and body text.
 */
export function rawGet(server: TestServer, rawPath: string): Promise<{ status: number; body: string }> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'GET', path: rawPath }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('latin1') }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** Every file under the data directory's uploads folder, relative to the data directory. */
export function filesOnDisk(dataDir: string): string[] {
  const root = path.join(dataDir, 'uploads')
  try {
    return (readdirSync(root, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(dataDir, path.join(entry.parentPath ?? (entry as any).path, entry.name)).split(path.sep).join('/'))
      .sort()
  } catch {
    return []
  }
}
