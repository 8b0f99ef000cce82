/**
 * What `plaza util meme`, `fakepost` and `logo` share: build the operation's query, then either
 * ask a server (GET with the query, as any client would) or run it here with the server's own
 * validation, image checks and renderer, and write the PNG.
 */
import { writeFile } from 'node:fs/promises'
import type { PlazaClient, Target } from './client.js'
import { answerType, reach, UsageError } from './client.js'
import { readLocal, storeLocalImage } from './imaging.js'

export type CardKind = 'meme' | 'fakepost' | 'logo'

export interface CardCommandOutput {
  output: string
  width: number
  height: number
}

interface Result {
  data: Buffer
  width: number
  height: number
}

const isUrl = (input: string) => /^https?:\/\//i.test(input)
const isUploadPath = (input: string) => /^\/?uploads\//.test(input)

/** The query parameter holding an image, per operation. */
const IMAGE_FIELD: Partial<Record<CardKind, string>> = { meme: 'url', fakepost: 'avatar' }

async function runRemote(url: string, kind: CardKind, query: Record<string, string>): Promise<Result> {
  const field = IMAGE_FIELD[kind]
  const image = field ? query[field] : undefined
  // A local file goes to the server first (POST /api/files); the operation then reads it by its path.
  if (field && image && !isUrl(image) && !isUploadPath(image)) query = { ...query, [field]: await storeLocalImage(url, image) }
  const response = await reach(url, `${url}/api/${kind}?${new URLSearchParams(query)}`, { headers: { accept: 'image/png' } })
  const type = await answerType(url, response)
  if (type !== 'image/png') throw new Error(`unexpected answer from ${url} (${type || 'no content type'}): is it a Plaza server?`)
  return { data: Buffer.from(await response.arrayBuffer()), width: Number(response.headers.get('x-image-width')), height: Number(response.headers.get('x-image-height')) }
}

/** The image `value` names: a server's uploads/ path, a URL through the fetch guard, or a local file. */
async function readImage(value: string, field: string, client: () => Promise<PlazaClient>): Promise<Uint8Array> {
  const [source, config] = await Promise.all([import('../server/catalog/imaging/source.js'), import('../server/config.js')])
  if (isUploadPath(value)) {
    const { services } = await client()
    return (await source.readSourceImage(services!, value, field, 'http://localhost')).bytes
  }
  if (isUrl(value)) {
    const { guardedFetch } = await import('../server/fetch-guard.js')
    const allowPrivate = config.parseFetchAllowPrivate(process.env.PLAZA_FETCH_ALLOW_PRIVATE)
    return (await source.checkImage((await guardedFetch(value, { field, allowPrivate })).bytes, field)).bytes
  }
  return (await source.checkImage(await readLocal(value), value)).bytes
}

async function runEmbedded(kind: CardKind, query: Record<string, string>, client: () => Promise<PlazaClient>): Promise<Result> {
  const [{ ZodError }, { describeZodError }, schemas, { renderCard }, { rasterize }, { formatPostTime }] = await Promise.all([
    import('zod'),
    import('../server/errors.js'),
    Promise.all([import('../shared/schemas/meme.js'), import('../shared/schemas/fakepost.js'), import('../shared/schemas/logo.js')]),
    import('../server/catalog/maker/scene.js'),
    import('../server/render/rasterize.js'),
    import('../server/catalog/maker/fakepost/render.js'),
  ])
  const [{ memeInput }, { fakepostInput }, { logoInput }] = schemas
  const parse = <T>(schema: { parse(value: unknown): T }): T => {
    try {
      return schema.parse(query)
    } catch (error) {
      throw error instanceof ZodError ? new UsageError(describeZodError(error)) : error
    }
  }
  let job: import('../server/catalog/maker/scene.js').CardJob
  if (kind === 'meme') {
    const input = parse(memeInput)
    job = { kind, template: input.template ?? null, image: input.url ? await readImage(input.url, 'image', client) : undefined, top: input.top, bottom: input.bottom }
  } else if (kind === 'fakepost') {
    const { avatar, time, ...input } = parse(fakepostInput)
    job = { kind, input: { ...input, time: time || formatPostTime(new Date()) }, avatar: avatar ? await readImage(avatar, 'avatar', client) : undefined }
  } else {
    job = { kind, input: parse(logoInput) }
  }
  const image = rasterize(await renderCard(job))
  return { data: Buffer.from(image.data), width: image.width, height: image.height }
}

/** Runs the card operation where the target says, writes the PNG (`-` for stdout) and describes it. */
export async function runCardCommand(
  target: Target,
  client: () => Promise<PlazaClient>,
  kind: CardKind,
  query: Record<string, string | undefined>,
  output: string,
): Promise<CardCommandOutput> {
  const given = Object.fromEntries(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined))
  const result = target.kind === 'remote' ? await runRemote(target.url, kind, given) : await runEmbedded(kind, given, client)
  if (output === '-') process.stdout.write(result.data)
  else await writeFile(output, result.data)
  return { output, width: result.width, height: result.height }
}

/** A name safe in a file name: `Plaza Maker!` → `plaza-maker`. */
export const slug = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-|-$/g, '').slice(0, 40) || 'image'
