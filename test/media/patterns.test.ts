/**
 * The known URL shapes of GET /api/media (src/server/catalog/media/patterns.ts): every family with
 * the URL forms people paste, and near misses (profile, search and site pages, ids of the wrong
 * shape, look-alike hosts) that must not be taken for media.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { matchPattern } from '../../src/server/catalog/media/patterns.js'

type Want = { provider: string; type: string; id: string | null; embed?: string | null; thumbnail?: string; author?: string; canonical?: string }

const MATCHES: Array<[string, Want]> = [
  // YouTube
  ['https://www.youtube.com/watch?v=dQw4w9WgXcQ', { provider: 'YouTube', type: 'video', id: 'dQw4w9WgXcQ', embed: 'https://www.youtube.com/embed/dQw4w9WgXcQ', thumbnail: 'https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg', canonical: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' }],
  ['https://youtube.com/watch?feature=share&v=dQw4w9WgXcQ&list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG', { provider: 'YouTube', type: 'video', id: 'dQw4w9WgXcQ' }],
  ['https://m.youtube.com/watch?v=dQw4w9WgXcQ&t=1m30s', { provider: 'YouTube', type: 'video', id: 'dQw4w9WgXcQ', embed: 'https://www.youtube.com/embed/dQw4w9WgXcQ?start=90' }],
  ['https://youtu.be/dQw4w9WgXcQ?si=abcDEF123&t=42', { provider: 'YouTube', type: 'video', id: 'dQw4w9WgXcQ', embed: 'https://www.youtube.com/embed/dQw4w9WgXcQ?start=42' }],
  ['https://www.youtube.com/shorts/aqz-KE-bpKQ', { provider: 'YouTube', type: 'video', id: 'aqz-KE-bpKQ' }],
  ['https://www.youtube.com/embed/dQw4w9WgXcQ', { provider: 'YouTube', type: 'video', id: 'dQw4w9WgXcQ' }],
  ['https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ', { provider: 'YouTube', type: 'video', id: 'dQw4w9WgXcQ' }],
  ['https://www.youtube.com/live/jfKfPfyJRdk?feature=shared', { provider: 'YouTube', type: 'live', id: 'jfKfPfyJRdk' }],
  ['https://music.youtube.com/watch?v=lYBUbBu4W08&feature=share', { provider: 'YouTube Music', type: 'audio', id: 'lYBUbBu4W08', canonical: 'https://music.youtube.com/watch?v=lYBUbBu4W08' }],
  ['https://www.youtube.com/playlist?list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG', { provider: 'YouTube', type: 'playlist', id: 'PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG', embed: 'https://www.youtube.com/embed/videoseries?list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG' }],
  // Vimeo
  ['https://vimeo.com/76979871', { provider: 'Vimeo', type: 'video', id: '76979871', embed: 'https://player.vimeo.com/video/76979871' }],
  ['https://vimeo.com/channels/staffpicks/76979871', { provider: 'Vimeo', type: 'video', id: '76979871' }],
  ['https://vimeo.com/groups/shortfilms/videos/76979871', { provider: 'Vimeo', type: 'video', id: '76979871' }],
  ['https://vimeo.com/showcase/1234567/video/76979871', { provider: 'Vimeo', type: 'video', id: '76979871' }],
  ['https://vimeo.com/76979871/8272103f6e', { provider: 'Vimeo', type: 'video', id: '76979871', embed: 'https://player.vimeo.com/video/76979871?h=8272103f6e' }],
  ['https://player.vimeo.com/video/76979871?h=8272103f6e&badge=0', { provider: 'Vimeo', type: 'video', id: '76979871', embed: 'https://player.vimeo.com/video/76979871?h=8272103f6e' }],
  // TikTok
  ['https://www.tiktok.com/@scout2015/video/6718335390845095173?is_from_webapp=1', { provider: 'TikTok', type: 'video', id: '6718335390845095173', embed: 'https://www.tiktok.com/embed/v2/6718335390845095173', author: '@scout2015' }],
  ['https://www.tiktok.com/@nasa/photo/7301234567890123456', { provider: 'TikTok', type: 'image', id: '7301234567890123456' }],
  ['https://www.tiktok.com/embed/v2/6718335390845095173', { provider: 'TikTok', type: 'video', id: '6718335390845095173' }],
  ['https://m.tiktok.com/v/6718335390845095173.html', { provider: 'TikTok', type: 'video', id: '6718335390845095173' }],
  ['https://vm.tiktok.com/ZMeAbCdEf/', { provider: 'TikTok', type: 'video', id: null, embed: null }],
  // X / Twitter
  ['https://twitter.com/jack/status/20', { provider: 'X', type: 'post', id: '20', embed: 'https://platform.twitter.com/embed/Tweet.html?id=20', author: '@jack', canonical: 'https://x.com/jack/status/20' }],
  ['https://x.com/NASA/status/1798756112954749358?s=20', { provider: 'X', type: 'post', id: '1798756112954749358', author: '@NASA' }],
  ['https://mobile.twitter.com/NASA/status/1798756112954749358/photo/1', { provider: 'X', type: 'post', id: '1798756112954749358' }],
  ['https://x.com/i/web/status/1798756112954749358', { provider: 'X', type: 'post', id: '1798756112954749358' }],
  // Instagram
  ['https://www.instagram.com/p/C8xYz12AbCd/', { provider: 'Instagram', type: 'post', id: 'C8xYz12AbCd', embed: 'https://www.instagram.com/p/C8xYz12AbCd/embed/' }],
  ['https://instagram.com/reel/C9AbCdEfGhI/?igsh=xyz', { provider: 'Instagram', type: 'video', id: 'C9AbCdEfGhI', embed: 'https://www.instagram.com/reel/C9AbCdEfGhI/embed/' }],
  ['https://www.instagram.com/reels/C9AbCdEfGhI/', { provider: 'Instagram', type: 'video', id: 'C9AbCdEfGhI' }],
  ['https://www.instagram.com/tv/B_1234abcd/', { provider: 'Instagram', type: 'video', id: 'B_1234abcd' }],
  ['https://www.instagram.com/natgeo/p/C8xYz12AbCd/', { provider: 'Instagram', type: 'post', id: 'C8xYz12AbCd' }],
  // SoundCloud
  ['https://soundcloud.com/forss/flickermood', { provider: 'SoundCloud', type: 'audio', id: 'forss/flickermood', embed: 'https://w.soundcloud.com/player/?url=https%3A%2F%2Fsoundcloud.com%2Fforss%2Fflickermood', author: 'forss' }],
  ['https://m.soundcloud.com/forss/sets/soulhack', { provider: 'SoundCloud', type: 'playlist', id: 'forss/sets/soulhack' }],
  ['https://on.soundcloud.com/AbCd1234', { provider: 'SoundCloud', type: 'audio', id: null }],
  // Spotify
  ['https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC?si=1a2b3c', { provider: 'Spotify', type: 'audio', id: '4uLU6hMCjMI75M1A2tKUQC', embed: 'https://open.spotify.com/embed/track/4uLU6hMCjMI75M1A2tKUQC' }],
  ['https://open.spotify.com/intl-de/album/4aawyAB9vmqN3uQ7FjRGTy', { provider: 'Spotify', type: 'album', id: '4aawyAB9vmqN3uQ7FjRGTy', canonical: 'https://open.spotify.com/album/4aawyAB9vmqN3uQ7FjRGTy' }],
  ['https://open.spotify.com/playlist/37i9dQZF1DXcBWIGoYBM5M', { provider: 'Spotify', type: 'playlist', id: '37i9dQZF1DXcBWIGoYBM5M' }],
  ['https://open.spotify.com/episode/512ojhOuo1ktJprKbVcKyQ', { provider: 'Spotify', type: 'audio', id: '512ojhOuo1ktJprKbVcKyQ' }],
  ['https://open.spotify.com/show/2MAi0BvDc6GTFvKFPXnkCL', { provider: 'Spotify', type: 'playlist', id: '2MAi0BvDc6GTFvKFPXnkCL' }],
  ['https://open.spotify.com/artist/0OdUWJ0sBjDrqHygGUXeCF', { provider: 'Spotify', type: 'profile', id: '0OdUWJ0sBjDrqHygGUXeCF' }],
  ['https://open.spotify.com/embed/track/4uLU6hMCjMI75M1A2tKUQC', { provider: 'Spotify', type: 'audio', id: '4uLU6hMCjMI75M1A2tKUQC' }],
  // Twitch (parent: the embedding host, here the default)
  ['https://www.twitch.tv/shroud', { provider: 'Twitch', type: 'live', id: 'shroud', embed: 'https://player.twitch.tv/?channel=shroud&parent=localhost', author: 'shroud' }],
  ['https://www.twitch.tv/videos/1234567890', { provider: 'Twitch', type: 'video', id: '1234567890', embed: 'https://player.twitch.tv/?video=v1234567890&parent=localhost' }],
  ['https://clips.twitch.tv/AwkwardHelplessSalamanderSwiftRage', { provider: 'Twitch', type: 'video', id: 'AwkwardHelplessSalamanderSwiftRage', embed: 'https://clips.twitch.tv/embed?clip=AwkwardHelplessSalamanderSwiftRage&parent=localhost' }],
  ['https://www.twitch.tv/shroud/clip/AwkwardHelplessSalamanderSwiftRage-x1Y2z3', { provider: 'Twitch', type: 'video', id: 'AwkwardHelplessSalamanderSwiftRage-x1Y2z3', author: 'shroud' }],
  // Reddit
  ['https://www.reddit.com/r/aww/comments/90bu6w/heat_index_was_110_degrees_so_we_offered_him_a/', { provider: 'Reddit', type: 'post', id: '90bu6w', embed: 'https://embed.reddit.com/r/aww/comments/90bu6w/heat_index_was_110_degrees_so_we_offered_him_a/' }],
  ['https://old.reddit.com/r/aww/comments/90bu6w/', { provider: 'Reddit', type: 'post', id: '90bu6w', canonical: 'https://www.reddit.com/r/aww/comments/90bu6w/' }],
  ['https://www.reddit.com/r/aww/comments/90bu6w/heat/e2p4x1k/', { provider: 'Reddit', type: 'post', id: '90bu6w' }],
  ['https://redd.it/90bu6w', { provider: 'Reddit', type: 'post', id: '90bu6w' }],
  ['https://www.reddit.com/r/aww/s/AbCdEf1234', { provider: 'Reddit', type: 'post', id: null, embed: null }],
  ['https://v.redd.it/abcdefgh1234', { provider: 'Reddit', type: 'video', id: 'abcdefgh1234' }],
  ['https://i.redd.it/abcdefgh1234.jpeg', { provider: 'Reddit', type: 'image', id: 'abcdefgh1234', thumbnail: 'https://i.redd.it/abcdefgh1234.jpeg' }],
  // Dailymotion
  ['https://www.dailymotion.com/video/x8abc12', { provider: 'Dailymotion', type: 'video', id: 'x8abc12', embed: 'https://www.dailymotion.com/embed/video/x8abc12', thumbnail: 'https://www.dailymotion.com/thumbnail/video/x8abc12' }],
  ['https://www.dailymotion.com/video/x7tgad0_some-old-title', { provider: 'Dailymotion', type: 'video', id: 'x7tgad0' }],
  ['https://dai.ly/x8abc12', { provider: 'Dailymotion', type: 'video', id: 'x8abc12' }],
  ['https://geo.dailymotion.com/player.html?video=x8abc12', { provider: 'Dailymotion', type: 'video', id: 'x8abc12' }],
  // Loom, Streamable
  ['https://www.loom.com/share/0281766fa2d04bb788eaf19e65135184', { provider: 'Loom', type: 'video', id: '0281766fa2d04bb788eaf19e65135184', embed: 'https://www.loom.com/embed/0281766fa2d04bb788eaf19e65135184' }],
  ['https://streamable.com/moo', { provider: 'Streamable', type: 'video', id: 'moo', embed: 'https://streamable.com/e/moo' }],
]

const NEAR_MISSES = [
  'https://www.youtube.com/',
  'https://www.youtube.com/watch?v=tooshort',
  'https://www.youtube.com/watch?v=dQw4w9WgXcQQ',
  'https://www.youtube.com/@mkbhd',
  'https://www.youtube.com/channel/UCBJycsmduvYEL83R_U4JriQ',
  'https://www.youtube.com/results?search_query=cats',
  'https://www.youtube.com/shorts/',
  'https://youtube.com.evil.example/watch?v=dQw4w9WgXcQ',
  'https://notyoutube.com/watch?v=dQw4w9WgXcQ',
  'https://youtu.be/',
  'https://vimeo.com/about',
  'https://vimeo.com/channels/staffpicks',
  'https://vimeo.com/user12345678',
  'https://vimeo.com/76979871/not-a-hash',
  'https://www.tiktok.com/@scout2015',
  'https://www.tiktok.com/@scout2015/video/123',
  'https://www.tiktok.com/explore',
  'https://twitter.com/jack',
  'https://x.com/home',
  'https://x.com/search/status/20',
  'https://x.com/jack/status/notanumber',
  'https://x.com/jack/status/20/likes',
  'https://www.instagram.com/natgeo/',
  'https://www.instagram.com/explore/',
  'https://www.instagram.com/p/',
  'https://soundcloud.com/forss',
  'https://soundcloud.com/discover/sets/charts-top',
  'https://soundcloud.com/forss/likes',
  'https://soundcloud.com/search?q=x',
  'https://open.spotify.com/',
  'https://open.spotify.com/track/short',
  'https://open.spotify.com/user/spotify',
  'https://open.spotify.com/search/daft',
  'https://www.twitch.tv/directory',
  'https://www.twitch.tv/videos',
  'https://www.twitch.tv/shroud/videos',
  'https://www.reddit.com/r/aww/',
  'https://www.reddit.com/user/spez',
  'https://www.reddit.com/r/aww/comments/',
  'https://www.dailymotion.com/us',
  'https://www.dailymotion.com/video/',
  'https://www.dailymotion.com/video/12345',
  'https://www.loom.com/share/not-an-id',
  'https://streamable.com/',
  'https://streamable.com/login',
  'https://example.com/watch?v=dQw4w9WgXcQ',
  'ftp://youtube.com/watch?v=dQw4w9WgXcQ',
  'not a url',
]

test('every family recognises its URL shapes: provider, type, id, embed, thumbnail, author', () => {
  for (const [url, want] of MATCHES) {
    const found = matchPattern(url)
    assert.ok(found, `${url}: no match`)
    assert.is(found!.provider, want.provider, url)
    assert.is(found!.type, want.type, url)
    assert.is(found!.id, want.id, url)
    if (want.embed !== undefined) assert.is(found!.embedUrl, want.embed, url)
    if (want.thumbnail !== undefined) assert.is(found!.thumbnail, want.thumbnail, url)
    if (want.author !== undefined) assert.is(found!.author, want.author, url)
    if (want.canonical !== undefined) assert.is(found!.canonicalUrl, want.canonical, url)
    // An id means a player: its markup loads the embed URL (or the provider's own script) and is well-formed.
    if (found!.embedUrl) {
      assert.ok(found!.embedHtml, `${url}: embed HTML`)
      assert.ok(found!.embedHtml!.includes(found!.embedUrl.replace(/&/g, '&amp;')) || /<blockquote/.test(found!.embedHtml!), `${url}: the HTML plays the embed URL`)
    }
  }
})

test('near misses match nothing', () => {
  for (const url of NEAR_MISSES) assert.is(matchPattern(url), null, url)
})

test("Twitch players name the embedding host as parent; ids are escaped in the markup", () => {
  const found = matchPattern('https://www.twitch.tv/shroud', { embedParent: 'plaza.example.org' })
  assert.is(found!.embedUrl, 'https://player.twitch.tv/?channel=shroud&parent=plaza.example.org')
  assert.match(found!.embedHtml!, /src="https:\/\/player\.twitch\.tv\/\?channel=shroud&amp;parent=plaza\.example\.org"/)
})

test.run()
