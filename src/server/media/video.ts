/**
 * Story video with ffmpeg (the static binary of @ffmpeg-installer/ffmpeg): the file must parse as
 * the container it claims to be and hold a video stream; it is re-muxed (streams copied, never
 * re-encoded) without any metadata, so a phone's GPS position, device and title tags are gone,
 * and its first frame becomes a JPEG poster (with a BlurHash). ffmpeg runs as a child process
 * through the media queue, on a temporary copy of the upload that is always removed.
 */
import { spawn } from 'node:child_process'
import { niced } from '../workers/priority.js'
import { createWriteStream } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { TRPCError } from '@trpc/server'
import sharp from 'sharp'
import { encodePoster, type ProcessedImage } from './images.js'
import type { MediaQueue } from './queue.js'

export type VideoContainer = 'mp4' | 'webm'

/** Longest side of the poster frame. */
export const POSTER_MAX_SIDE = 2048
/** Wall-clock budget of one ffmpeg run; past it the process is killed. */
export const VIDEO_TIMEOUT_MS = 60_000
/** ffmpeg's stderr kept for the log and for telling a refusal's reason: its tail only. */
const STDERR_LIMIT = 8 * 1024

export interface NormalisedVideo {
  /** The re-muxed file, inside a temporary folder that is removed once `use` settles. */
  videoPath: string
  /** The video's size as shown (rotation applied): that of its first frame. */
  width: number
  height: number
  /** The first frame as a JPEG, with its BlurHash. */
  poster: ProcessedImage
}

const notVideo = () => new TRPCError({ code: 'BAD_REQUEST', message: 'The file could not be read as a video: send an MP4, MOV or WebM file' })

const CONTAINERS: Record<VideoContainer, { demuxer: string; muxer: string[]; name: string }> = {
  // The demuxer is named, never guessed: ffmpeg would otherwise also open playlists and other
  // formats that reference further files.
  mp4: { demuxer: 'mov', muxer: ['-f', 'mp4', '-movflags', '+faststart'], name: 'MP4' },
  webm: { demuxer: 'matroska', muxer: ['-f', 'webm'], name: 'WebM' },
}

function ffmpegArgs(container: VideoContainer, input: string, video: string, frame: string): string[] {
  const { demuxer, muxer } = CONTAINERS[container]
  return [
    ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y'],
    ['-protocol_whitelist', 'file', '-f', demuxer, '-i', input],
    // The first video and first audio stream only: data, subtitle and timecode tracks and chapters are dropped,
    // and with them any metadata (global, per stream) the phone wrote. Rotation is side data and survives.
    ['-map', '0:v:0', '-map', '0:a:0?', '-c', 'copy', '-map_metadata', '-1', '-map_metadata:s', '-1', '-map_chapters', '-1', ...muxer, video],
    // The first frame at full size (rotation applied), losslessly: its size is the video's as shown, and
    // sharp makes the poster from it like any uploaded image.
    ['-map', '0:v:0', '-frames:v', '1', '-map_metadata', '-1', '-f', 'image2', '-c:v', 'png', '-compression_level', '1', frame],
  ].flat()
}

/** Runs ffmpeg; resolves with its exit code (null when killed) and the tail of its stderr. */
async function runFfmpeg(args: string[], timeoutMs: number): Promise<{ code: number | null; stderr: string; timedOut: boolean }> {
  const { default: ffmpeg } = await import('@ffmpeg-installer/ffmpeg')
  return new Promise((resolve, reject) => {
    const child = spawn(...niced(ffmpeg.path, args), { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, timeoutMs)
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr = (stderr + text).slice(-STDERR_LIMIT)
    })
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stderr, timedOut })
    })
  })
}

function refusal(container: VideoContainer, stderr: string): TRPCError {
  if (/matches no streams/.test(stderr)) return new TRPCError({ code: 'BAD_REQUEST', message: 'The file has no video stream' })
  if (/not currently supported in container|Only VP8 or VP9 or AV1 video/.test(stderr)) {
    return new TRPCError({ code: 'BAD_REQUEST', message: `The video's codecs cannot be stored as ${CONTAINERS[container].name}` })
  }
  return notVideo()
}

export interface NormaliseOptions {
  queue: MediaQueue
  timeoutMs?: number
}

/**
 * Copies `source` to a temporary file, re-muxes it into `container` and cuts the poster frame,
 * then hands both to `use` (which stores them); the temporary folder is removed whatever happens.
 * Refuses with 400 what ffmpeg cannot read as a video with a video stream.
 */
export async function normaliseVideo<T>(
  source: AsyncIterable<Buffer>,
  container: VideoContainer,
  options: NormaliseOptions,
  use: (video: NormalisedVideo) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'plaza-video-'))
  try {
    const input = path.join(dir, 'input')
    const videoPath = path.join(dir, `video.${container}`)
    const framePath = path.join(dir, 'frame.png')
    await pipeline(Readable.from(source), createWriteStream(input))
    const timeoutMs = options.timeoutMs ?? VIDEO_TIMEOUT_MS
    const normalised = await options.queue.run(async () => {
      const run = await runFfmpeg(ffmpegArgs(container, input, videoPath, framePath), timeoutMs)
      if (run.timedOut) throw new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `The video took more than ${timeoutMs / 1000} s to process; send a shorter one` })
      if (run.code !== 0) throw refusal(container, run.stderr)
      // No frame means none could be decoded: a video stream in name only.
      const frame = await readFile(framePath).catch(() => null)
      if (!frame) throw notVideo()
      const meta = await sharp(frame).metadata().catch(() => null)
      if (meta?.format !== 'png' || !meta.width || !meta.height) throw notVideo()
      return { videoPath, width: meta.width, height: meta.height, poster: await encodePoster(frame, POSTER_MAX_SIDE) }
    })
    return await use(normalised)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
