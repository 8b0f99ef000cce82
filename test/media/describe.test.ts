/**
 * describeMedia with known platforms' host names resolved to a loopback site (the fetch guard's
 * `resolve`): a pattern and its page merged, a short link completed by its redirect, and a
 * pattern still answering when its page cannot be fetched.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { describeMedia } from '../../src/server/catalog/media/describe.js'
import { startSite, videoPage, type Site } from './site.js'

let site: Site
test.before(async () => {
  site = await startSite()
})
test.after(() => site.close())

const options = () => ({ fetch: true, allowPrivate: true, timeoutMs: 3000, resolve: async () => ['127.0.0.1'] })

test('a YouTube URL: id, thumbnail and player from the pattern; title and author from the page and its oEmbed answer', async () => {
  site.html('/watch', videoPage('/oembed-yt'))
  site.route('/oembed-yt', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'video', title: 'Never Gonna', author_name: 'Rick', provider_name: 'YouTube' })))
  const answer = await describeMedia(`http://www.youtube.com:${site.port}/watch?v=dQw4w9WgXcQ`, options())
  assert.equal([answer.provider, answer.type, answer.id, answer.title, answer.author], ['YouTube', 'video', 'dQw4w9WgXcQ', 'Never Gonna', 'Rick'])
  assert.equal([answer.source.id, answer.source.title, answer.source.type], ['pattern', 'oembed', 'oembed'])
  // The page names its own player (og:video) and thumbnail, which come before the pattern's.
  assert.is(answer.embed_url, 'https://tube.example/embed/abc')
  assert.is(answer.thumbnail, `http://www.youtube.com:${site.port}/img/thumb.jpg`)
})

test('a short link is completed by where it redirects', async () => {
  site.route('/ZMeAbCdEf/', (_req, res) => res.writeHead(301, { location: `http://www.tiktok.com:${site.port}/@scout2015/video/6718335390845095173` }).end())
  site.html('/@scout2015/video/6718335390845095173', '<html><head><meta property="og:title" content="Scout"></head></html>')
  const answer = await describeMedia(`http://vm.tiktok.com:${site.port}/ZMeAbCdEf/`, options())
  assert.equal([answer.provider, answer.id, answer.embed_url, answer.title, answer.author], ['TikTok', '6718335390845095173', 'https://www.tiktok.com/embed/v2/6718335390845095173', 'Scout', '@scout2015'])
})

test("a known pattern whose page fails still answers from the pattern, saying why; an unknown URL's failure is an error", async () => {
  site.route('/video/x8abc12', (_req, res) => res.writeHead(503).end())
  const answer = await describeMedia(`http://www.dailymotion.com:${site.port}/video/x8abc12`, options())
  assert.equal([answer.fetched, answer.provider, answer.id, answer.embed_url], [false, 'Dailymotion', 'x8abc12', 'https://www.dailymotion.com/embed/video/x8abc12'])
  assert.match(answer.message, /the page could not be fetched/)
  assert.equal(answer.warnings, ['url: the server answered HTTP 503'])
  try {
    await describeMedia(`http://unknown.example:${site.port}/video/x8abc12`, options())
    assert.unreachable('an unknown URL whose page fails is an error')
  } catch (error) {
    assert.match((error as Error).message, /url: the server answered HTTP 503/)
  }
})

test('a known pattern redirected to a link-local address is still refused', async () => {
  site.route('/shroud', (_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/' }).end())
  try {
    await describeMedia(`http://www.twitch.tv:${site.port}/shroud`, options())
    assert.unreachable('refused')
  } catch (error) {
    assert.match((error as Error).message, /169\.254\.169\.254 is a link-local address/)
  }
})

test.run()
