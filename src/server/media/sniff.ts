/** What a file is, read from its bytes only: a client's file name and declared type are never trusted. */
import { fileTypeFromBuffer } from 'file-type'
import type { ImageFormat } from './images.js'

/** Bytes file-type needs to recognise any format it knows. */
export const SNIFF_BYTES = 4100

export type SniffedMedia =
  | { kind: 'image'; format: ImageFormat; mime: string }
  | { kind: 'video'; ext: 'mp4' | 'webm'; mime: 'video/mp4' | 'video/webm' }
  | { kind: 'other'; mime: string | null }

export async function sniffMedia(head: Buffer): Promise<SniffedMedia> {
  const type = await fileTypeFromBuffer(head)
  switch (type?.ext) {
    case 'jpg':
      return { kind: 'image', format: 'jpeg', mime: 'image/jpeg' }
    // An animated PNG is still a PNG; sharp keeps its first frame.
    case 'png':
    case 'apng':
      return { kind: 'image', format: 'png', mime: 'image/png' }
    case 'webp':
      return { kind: 'image', format: 'webp', mime: 'image/webp' }
    case 'gif':
      return { kind: 'image', format: 'gif', mime: 'image/gif' }
    // QuickTime (phones' MOV) and M4V are the same ISO container family; they are re-muxed into MP4.
    case 'mp4':
    case 'm4v':
    case 'mov':
      return { kind: 'video', ext: 'mp4', mime: 'video/mp4' }
    case 'webm':
      return { kind: 'video', ext: 'webm', mime: 'video/webm' }
    default:
      return { kind: 'other', mime: type?.mime ?? null }
  }
}
