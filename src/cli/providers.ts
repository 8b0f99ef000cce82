/**
 * What `plaza util imagine` and `plaza util weather` share: run the operation embedded (the
 * provider layer in this process, configured from this environment as `plaza serve` would be) or
 * ask a server (`--url`), with the server's own validation either way.
 */
import { writeFile } from 'node:fs/promises'
import type { ImageModelAlias } from '../shared/schemas/images.js'
import type { WeatherAnswer } from '../shared/schemas/weather.js'
import type { Target } from './client.js'
import { answerType, reach, UsageError } from './client.js'

export interface ImagineCommandOutput {
  output: string
  model: ImageModelAlias
  format: 'png' | 'jpeg'
  width: number
  height: number
}

/** Validates with the server's schema; a mistake is a usage error (exit 2) before anything is asked. */
export async function parse<T>(schema: { parse(input: unknown): T }, input: Record<string, string | undefined>): Promise<T> {
  const [{ describeZodError }, { ZodError }] = await Promise.all([import('../server/errors.js'), import('zod')])
  try {
    return schema.parse(Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)))
  } catch (error) {
    throw error instanceof ZodError ? new UsageError(describeZodError(error)) : error
  }
}

/** The provider layer of this process, from this environment; closed by `use`'s end. */
export async function withLayer<T>(use: (layer: import('../server/providers/layer.js').ProviderLayer) => Promise<T>): Promise<T> {
  const [{ loadProvidersConfig }, { createProviderLayer }] = await Promise.all([import('../server/providers/config.js'), import('../server/providers/layer.js')])
  const layer = createProviderLayer(loadProvidersConfig(process.env))
  try {
    return await use(layer)
  } finally {
    await layer.close()
  }
}

/** Asks a server's operation (GET, or POST with `body`); an error answer is thrown with the server's message. */
export async function askServer(url: string, route: string, query: Record<string, string | undefined>, accept: string, extra: { headers?: Record<string, string>; body?: import('undici').FormData } = {}) {
  const search = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined))
  const response = await reach(url, `${url}${route}?${search}`, { headers: { accept, ...extra.headers }, ...(extra.body ? { method: 'POST', body: extra.body } : {}) })
  const type = await answerType(url, response)
  return { response, type }
}

/** `a lighthouse at dusk` → `imagine-a-lighthouse-at-dusk.png`. */
export function imagineFileName(prompt: string, format: 'png' | 'jpeg'): string {
  const slug = prompt.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40).replace(/-+$/, '')
  return `imagine-${slug || 'image'}.${format === 'jpeg' ? 'jpg' : 'png'}`
}

export async function runImagine(target: Target, input: { prompt: string; model?: string; size?: string }, output: string | undefined): Promise<ImagineCommandOutput> {
  const { imagineInput } = await import('../shared/schemas/images.js')
  const parsed = await parse(imagineInput, input)
  let result: { data: Buffer; format: 'png' | 'jpeg'; width: number; height: number }
  if (target.kind === 'remote') {
    const { response, type } = await askServer(target.url, '/api/imagine', input, 'image/png, image/jpeg')
    if (type !== 'image/png' && type !== 'image/jpeg') throw new Error(`unexpected answer from ${target.url} (${type || 'no content type'}): is it a Plaza server?`)
    result = {
      data: Buffer.from(await response.arrayBuffer()),
      format: type === 'image/jpeg' ? 'jpeg' : 'png',
      width: Number(response.headers.get('x-image-width')),
      height: Number(response.headers.get('x-image-height')),
    }
  } else {
    const [{ generate }, config] = await Promise.all([import('../server/catalog/images/generate.js'), import('../server/config.js')])
    const allowPrivate = config.parseFetchAllowPrivate(process.env.PLAZA_FETCH_ALLOW_PRIVATE)
    const { images } = await withLayer((layer) => generate({ layer, env: process.env, allowPrivate }, { prompt: parsed.prompt, alias: parsed.model, n: 1, ...(parsed.size ?? {}) }))
    const [image] = images
    result = { data: image.data, format: image.mime === 'image/jpeg' ? 'jpeg' : 'png', width: image.width, height: image.height }
  }
  const file = output ?? imagineFileName(parsed.prompt, result.format)
  if (file === '-') process.stdout.write(result.data)
  else await writeFile(file, result.data)
  return { output: file, model: parsed.model, format: result.format, width: result.width, height: result.height }
}

export async function runWeather(target: Target, input: { location: string; units?: string }): Promise<WeatherAnswer> {
  const { weatherInput } = await import('../shared/schemas/weather.js')
  const parsed = await parse(weatherInput, input)
  if (target.kind === 'remote') {
    const { response } = await askServer(target.url, '/api/weather', input, 'application/json')
    return (await response.json()) as WeatherAnswer
  }
  const { getWeather } = await import('../server/catalog/weather/http.js')
  return withLayer((layer) => getWeather(layer, parsed))
}

/** A compass point for a wind direction in degrees. */
const compass = (degrees: number) => ['N', 'NE', 'E', 'SE', 'S', 'SW', 'W', 'NW'][Math.round((((degrees % 360) + 360) % 360) / 45) % 8]

/** The answer as a person reads it: the place, now, then one line a day. */
export function formatWeather(answer: WeatherAnswer): string {
  const u = answer.units
  const place = [answer.location.name, answer.location.country].filter(Boolean).join(', ')
  const now = answer.current
  const lines = [
    `${place} (${answer.location.latitude.toFixed(2)}, ${answer.location.longitude.toFixed(2)}${answer.location.timezone ? `, ${answer.location.timezone}` : ''})`,
    `Now: ${now.description}, ${now.temperature}${u.temperature} (feels like ${now.feels_like}${u.temperature}), humidity ${now.humidity}${u.humidity}, wind ${now.wind_speed} ${u.wind_speed} ${compass(now.wind_direction)}`,
    '',
    ...answer.daily.map((day) => `${day.date}  ${`${day.min}…${day.max}${u.temperature}`.padEnd(14)} ${`${day.precipitation} ${u.precipitation}`.padEnd(10)} ${day.description}`),
  ]
  return lines.join('\n')
}
