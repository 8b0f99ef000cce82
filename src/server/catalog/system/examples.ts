/**
 * The example request of every operation: what the OpenAPI document publishes as its parameters'
 * and body's `example`, and what the reference page's "Try it" starts from. A required field takes
 * its value from the operation's own examples, else from the field's (by name: one value for every
 * operation that takes the field), else from its schema (`examples`, `default`, `const`, the first
 * of an `enum`); an optional field appears only where the operation names it. The examples tell
 * one story: alice registers (user 1), logs in with the same words, posts (post 1), follows user 2
 * and blocks and mutes user 3; her account is private, and she approves user 4's request to follow
 * her and denies user 5's.
 * test/server/examples.test.ts sends every operation's example and expects success, so a value
 * that stops being valid, or a new required field without one, fails there.
 */
import type { JsonSchema } from './json-schema.js'

/** A picture, a page and a recording on the public web, for the operations that fetch one. */
const PICTURE = 'https://upload.wikimedia.org/wikipedia/commons/3/3a/Cat03.jpg'
const PAGE = 'https://example.com/'
const RECORDING = 'https://upload.wikimedia.org/wikipedia/commons/c/c8/Example.ogg'

/** By field name, for every operation that takes the field. */
const FIELD_EXAMPLES: Record<string, unknown> = {
  // accounts: register, then log in with the same words
  username: 'alice',
  email: 'alice@example.com',
  password: 'correct horse battery',
  full_name: 'Alice Liddell',
  current_password: 'correct horse battery',
  new_password: 'correct horse battery staple',
  // ids: the first of each thing, and user 2 for what one does to someone else
  id: 1,
  user_id: 2,
  post_id: 1,
  comment_id: 1,
  story_id: 1,
  notification_id: 1,
  target_type: 'user',
  target_id: 2,
  reason: 'spam',
  note: 'Posts the same link under every post',
  content: 'Hello from Plaza! #plaza',
  content_type: 'text',
  q: 'plaza',
  tag: 'sky',
  // the catalog
  url: PICTURE,
  language: 'javascript',
  code: 'console.log("Hello from Plaza")',
  ratio: '16:9',
  messages: [{ role: 'user', content: 'Say hello in one sentence.' }],
  prompt: 'a lighthouse at dusk, watercolour',
  text: 'Hello from Plaza',
  location: 'Berlin',
  // mailed secrets (a reset or verification link's token) and a login's two-factor challenge: their shape
  token: 'Xk9fQ2c8VbT1r4pLmN7sYw0eHj3uDa6oKq5gZx2iCfE',
  challenge_token: 'q7Lz0cV3mR8tYw2NbK5sJd9hUf1pXe4aGo6iTn3vBcM',
  // Web Push: what a browser's PushSubscription.toJSON() gives (a push service's URL, the user agent's P-256 key and auth secret)
  subscription: {
    endpoint: 'https://updates.push.services.mozilla.com/wpush/v2/gAAAAABn-example',
    keys: { p256dh: 'BEEGCEz9ez8CYGaEGXJfEDTpiAErW4weYRpDyrY-W_0nrNi2Wpoc8IctwKIOW6v1Ve9t-l0E5-cScWZgSKm6vvs', auth: 'jCy6g7eD-XVD_wElQtGv4w' },
  },
}

/** By operationId: what an operation reads differently, and the optional fields it shows. */
const OPERATION_EXAMPLES: Record<string, Record<string, unknown>> = {
  usersUpdate: { bio: 'Down the rabbit hole' },
  // Someone else than the user followed: a block hides each from the other.
  usersBlock: { user_id: 3 },
  usersUnblock: { user_id: 3 },
  usersMute: { user_id: 3 },
  usersUnmute: { user_id: 3 },
  // Two of the requests to follow her private account.
  usersApproveFollowRequest: { user_id: 4 },
  usersDenyFollowRequest: { user_id: 5 },
  postsCreate: { content: 'Sunset over the bay #sky', is_public: true },
  postsEdit: { content: 'Sunset over the bay, from the pier #sky' },
  storiesCreate: { text_content: 'Good morning from Plaza', background_color: '#FF7A2F' },
  media: { url: PAGE },
  identifyGet: { url: RECORDING },
  imageFxGet: { imageUrl: PICTURE, effect: 'sepia' },
  imageFxPost: { effect: 'sepia' },
  clips: { q: 'lofi hip hop' },
  online: { q: 'What is new in Node.js 24?' },
  coder: { prompt: 'Write a Python function that reverses a string' },
  agent: { prompt: 'Print the first 10 prime numbers with Python' },
  v1ModelsById: { id: 'modelg-4o-mini' },
  v1ChatCompletions: { model: 'modelg-4o-mini' },
  inferenceChatCompletions: { model: 'modelg-4o-mini' },
  carbon: { code: 'const greeting = "Hello from Plaza"\nconsole.log(greeting)', language: 'javascript', theme: 'dracula' },
  codeimage: { codeSnippet: 'const greeting = "Hello from Plaza"\nconsole.log(greeting)', language: 'javascript', title: 'hello.js' },
  meme: { template: 'this-is-fine', top: 'Prod is down', bottom: 'This is fine' },
  fakepost: { username: 'alice', name: 'Alice Liddell', text: 'Hello from Plaza! #plaza' },
  logo: { text: 'Plaza', style: 'retro' },
  imagine: { model: 'dalle-3' },
  // The gateway's OpenAI- and Anthropic-shaped surfaces: model names as their clients send them.
  v1Responses: { model: 'modelg-4o-mini', input: 'Say hello in one sentence.' },
  v1ResponsesByIdGet: { id: 'resp_4f1c2b9a8e7d6c5b4a39281706f5e4d3' },
  v1ResponsesByIdDelete: { id: 'resp_4f1c2b9a8e7d6c5b4a39281706f5e4d3' },
  v1Messages: { model: 'modelg-4o-mini', max_tokens: 256 },
  v1Embeddings: { model: 'text-embedding-3-small', input: 'Hello from Plaza' },
  v1Moderations: { input: 'Hello from Plaza' },
  v1AudioSpeech: { model: 'tts-1', input: 'Hello from Plaza', voice: 'alloy' },
  v1AudioTranscriptions: { model: 'whisper-1' },
  // two-factor login: a code from the authenticator app (`code` is a program elsewhere)
  authLoginTwoFactor: { code: '123456' },
  twoFactorConfirm: { code: '123456' },
  twoFactorDisable: { code: '123456' },
  twoFactorRecoveryCodes: { code: '123456' },
  pushSubscribe: { data: { alerts: { story_view: false }, policy: 'all' } },
  pushUpdate: { data: { alerts: { like: false } } },
  usersChangeEmail: { email: 'alice@wonderland.example' },
}

/** The value a schema suggests for itself, if any. */
function fromSchema(schema: JsonSchema): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0]
  if ('default' in schema) return schema.default
  if ('const' in schema) return schema.const
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  return undefined
}

/**
 * The example of one input field of operation `operationId`, or undefined when it has none (an
 * optional field the operation does not show, or a required one nothing gives a value: the examples
 * test fails on that).
 */
export function exampleOf(operationId: string, field: string, schema: JsonSchema, required: boolean): unknown {
  const own = OPERATION_EXAMPLES[operationId]
  if (own && field in own) return own[field]
  if (!required) return undefined
  return FIELD_EXAMPLES[field] ?? fromSchema(schema)
}
