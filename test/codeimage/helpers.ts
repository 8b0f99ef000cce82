import sharp from 'sharp'

export const SNIPPET = `import { createServer } from 'node:http'

// Answers every request with a greeting
const server = createServer((req, res) => {
  res.end(JSON.stringify({ hello: 'world', n: 42 }))
})

server.listen(8080)`

export async function decode(png: Uint8Array) {
  const { data, info } = await sharp(Buffer.from(png)).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  const pixel = (x: number, y: number) => {
    const i = (Math.floor(y) * info.width + Math.floor(x)) * 4
    return { r: data[i], g: data[i + 1], b: data[i + 2], a: data[i + 3] }
  }
  let sum = 0
  for (let i = 0; i < data.length; i += 4) sum += 0.2126 * data[i] + 0.7152 * data[i + 1] + 0.0722 * data[i + 2]
  return { width: info.width, height: info.height, data, pixel, meanLuminance: sum / (data.length / 4) }
}

export function hex(color: string) {
  const n = parseInt(color.replace('#', '').padEnd(6, color.slice(-1)), 16)
  return { r: n >> 16, g: (n >> 8) & 255, b: n & 255 }
}

export function near(a: { r: number; g: number; b: number }, b: { r: number; g: number; b: number }, tolerance = 12) {
  return Math.abs(a.r - b.r) <= tolerance && Math.abs(a.g - b.g) <= tolerance && Math.abs(a.b - b.b) <= tolerance
}
