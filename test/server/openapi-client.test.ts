/**
 * A client generated from the served OpenAPI document is real: openapi-typescript turns the
 * document into `paths` types, a small openapi-fetch program written against them type-checks
 * (and a deliberately wrong one does not), then runs against the live server.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'
import { tsImport } from 'tsx/esm/api'
import ts from 'typescript'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startTestServer, tempDir } from '../helpers/server.js'

/** Registers through the typed client, then reads the new user's profile and a missing post with the token. */
const CLIENT = `import createClient from 'openapi-fetch'
import type { paths } from './schema.js'

export async function run(baseUrl: string) {
  const client = createClient<paths>({ baseUrl })
  const registered = await client.POST('/api/mobile/auth/register', {
    body: { username: 'typed_client', email: 'typed@example.com', password: 'correct horse', full_name: 'Typed Client' },
  })
  if (!registered.data) throw new Error('register failed: ' + JSON.stringify(registered.error))
  const status: 'success' = registered.data.status
  const session = registered.data.data as { token: string; user: { id: number } }
  const headers = { authorization: 'Bearer ' + session.token }
  const profile = await client.GET('/api/mobile/user/profile/{user_id}', { params: { path: { user_id: session.user.id } }, headers })
  const missing = await client.GET('/api/mobile/posts/detail/{post_id}', { params: { path: { post_id: 999999 }, query: { limit: 5 } }, headers })
  const message: string | undefined = missing.error?.message
  return { status, registeredCode: registered.response.status, profile: profile.data?.data, missingCode: missing.response.status, message }
}
`

/** Wrong on purpose, once per line: a number for a string field, a path that does not exist, a missing path parameter. */
const WRONG = `import createClient from 'openapi-fetch'
import type { paths } from './schema.js'

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:1' })
export const wrongField = client.POST('/api/mobile/posts/create', { body: { content: 42 } })
export const wrongPath = client.GET('/api/mobile/no/such/path')
export const missingParam = client.GET('/api/mobile/posts/detail/{post_id}', { params: { path: {} } })
`

function typeErrors(files: string[]): ts.Diagnostic[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
  })
  return [...ts.getPreEmitDiagnostics(program)]
}

const describe = (diagnostics: ts.Diagnostic[]) =>
  diagnostics.map((d) => `${d.file ? path.basename(d.file.fileName) + ':' + (d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1) : ''} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`).join('\n')

test('a client generated from /api/openapi.json type-checks, refuses wrong calls, and works against the server', async () => {
  const server = await startTestServer()
  const dir = tempDir('plaza-openapi-client-')
  try {
    const document = (await server.request('GET', '/api/openapi.json')).body
    writeFileSync(path.join(dir, 'schema.d.ts'), astToString(await openapiTS(document)))
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
    // openapi-fetch and @types/node are resolved from this package's own dependencies.
    symlinkSync(path.resolve('node_modules'), path.join(dir, 'node_modules'), 'dir')
    mkdirSync(path.join(dir, 'src'))
    const client = path.join(dir, 'src', 'client.ts')
    const wrong = path.join(dir, 'src', 'wrong.ts')
    writeFileSync(client, CLIENT.replaceAll("'./schema.js'", "'../schema.js'"))
    writeFileSync(wrong, WRONG.replaceAll("'./schema.js'", "'../schema.js'"))

    // One program for both (a second would double the time): every error is one of the three wrong lines.
    const errors = typeErrors([client, wrong])
    const lines = new Set(errors.map((d) => d.file && path.basename(d.file.fileName) + ':' + (d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1)))
    assert.equal([...lines].sort(), ['wrong.ts:5', 'wrong.ts:6', 'wrong.ts:7'], describe(errors))

    // The generated client is TypeScript, loaded as a user's project would run it: through tsx.
    const { run } = (await tsImport(pathToFileURL(client).href, import.meta.url)) as { run: (url: string) => Promise<Record<string, any>> }
    const result = await run(server.url)
    assert.is(result.status, 'success')
    assert.is(result.registeredCode, 201)
    assert.is(result.profile.username, 'typed_client')
    assert.is(result.profile.full_name, 'Typed Client')
    assert.is(result.missingCode, 404)
    assert.type(result.message, 'string')
  } finally {
    await server.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
