/**
 * Known media URL shapes (docs/media.md#patterns), recognised from the URL alone, with no fetch:
 * the provider, the kind of media, its id on the platform, and the player a page would embed.
 * Each family is a function of the parsed URL that answers null for anything it does not know for
 * certain (a profile page, a search page, a path too short to hold an id), so that a near miss is
 * never taken for media.
 */
import type { MediaType } from '../../../shared/schemas/media.js'
import { hasKey } from '../../../shared/lookup.js'

export interface PatternMatch {
  provider: string
  type: MediaType
  /** The media's id on the platform; null for a short link the platform resolves only by redirect. */
  id: string | null
  /** The URL an `<iframe>` (or the provider's script) plays it from; null when the platform offers none without an id. */
  embedUrl: string | null
  embedHtml: string | null
  /** A thumbnail whose address follows from the id alone (YouTube, Dailymotion); null otherwise. */
  thumbnail: string | null
  /** The account that posted it, where the URL names it (`@user` on TikTok, the user on X). */
  author: string | null
  /** The media's own page in its usual form, where the URL holds enough to write it. */
  canonicalUrl: string | null
}

export interface PatternOptions {
  /** Twitch players only play inside the host named as `parent`: the site that embeds them. */
  embedParent?: string
}

const escapeAttr = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

function iframe(src: string, title: string, width: string | number, height: number, allow: string): string {
  return `<iframe src="${escapeAttr(src)}" width="${width}" height="${height}" title="${escapeAttr(title)}" frameborder="0" allow="${allow}" allowfullscreen></iframe>`
}

const VIDEO_ALLOW = 'autoplay; clipboard-write; encrypted-media; fullscreen; picture-in-picture'

function match(partial: Omit<PatternMatch, 'embedHtml' | 'thumbnail' | 'author' | 'canonicalUrl'> & Partial<PatternMatch>): PatternMatch {
  return { embedHtml: null, thumbnail: null, author: null, canonicalUrl: null, ...partial }
}

/** The host without `www.`/`m.`/`mobile.`, lower case. */
const bareHost = (url: URL) => url.hostname.toLowerCase().replace(/^(www|m|mobile)\./, '')
/** The path's non-empty segments, decoded where they decode. */
function segments(url: URL): string[] {
  return url.pathname
    .split('/')
    .filter(Boolean)
    .map((part) => {
      try {
        return decodeURIComponent(part)
      } catch {
        return part
      }
    })
}

// YouTube ---------------------------------------------------------------------------------------

const YOUTUBE_ID = /^[A-Za-z0-9_-]{11}$/
const YOUTUBE_HOSTS = new Set(['youtube.com', 'music.youtube.com', 'youtube-nocookie.com', 'gaming.youtube.com'])

/** `t=1h2m3s`, `t=75`, `start=75` as seconds; null when absent or unreadable. */
function startSeconds(url: URL): number | null {
  const value = url.searchParams.get('t') ?? url.searchParams.get('start') ?? (url.hash.match(/[#&]t=([^&]+)/)?.[1] ?? null)
  if (!value) return null
  if (/^\d+s?$/.test(value)) return Number.parseInt(value, 10)
  const parts = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(value)
  if (!parts || !(parts[1] || parts[2] || parts[3])) return null
  return Number(parts[1] ?? 0) * 3600 + Number(parts[2] ?? 0) * 60 + Number(parts[3] ?? 0)
}

function youtube(url: URL): PatternMatch | null {
  const host = bareHost(url)
  const parts = segments(url)
  let id: string | null = null
  const music = host === 'music.youtube.com'
  let live = false
  if (host === 'youtu.be') id = parts[0] ?? null
  else if (YOUTUBE_HOSTS.has(host)) {
    if (parts[0] === 'watch' && parts.length === 1) id = url.searchParams.get('v')
    else if (['shorts', 'embed', 'live', 'v', 'e'].includes(parts[0]) && parts.length === 2) {
      id = parts[1]
      live = parts[0] === 'live'
    } else if (parts[0] === 'playlist' && parts.length === 1) {
      const list = url.searchParams.get('list')
      if (!list || !/^[A-Za-z0-9_-]{10,64}$/.test(list)) return null
      const embedUrl = `https://www.youtube.com/embed/videoseries?list=${list}`
      return match({
        provider: music ? 'YouTube Music' : 'YouTube',
        type: 'playlist',
        id: list,
        embedUrl,
        embedHtml: iframe(embedUrl, 'YouTube playlist', 560, 315, VIDEO_ALLOW),
        canonicalUrl: `https://www.youtube.com/playlist?list=${list}`,
      })
    }
  } else return null
  if (!id || !YOUTUBE_ID.test(id)) return null
  const start = startSeconds(url)
  const embedUrl = `https://www.youtube.com/embed/${id}${start ? `?start=${start}` : ''}`
  return match({
    provider: music ? 'YouTube Music' : 'YouTube',
    type: music ? 'audio' : live ? 'live' : 'video',
    id,
    embedUrl,
    embedHtml: iframe(embedUrl, music ? 'YouTube Music player' : 'YouTube video player', 560, 315, VIDEO_ALLOW),
    thumbnail: `https://i.ytimg.com/vi/${id}/hqdefault.jpg`,
    canonicalUrl: music ? `https://music.youtube.com/watch?v=${id}` : `https://www.youtube.com/watch?v=${id}`,
  })
}

// Vimeo -----------------------------------------------------------------------------------------

function vimeo(url: URL): PatternMatch | null {
  const host = bareHost(url)
  const parts = segments(url)
  let id: string | undefined
  let hash: string | null = null
  if (host === 'player.vimeo.com') {
    if (parts[0] !== 'video' || parts.length !== 2) return null
    id = parts[1]
    hash = url.searchParams.get('h')
  } else if (host === 'vimeo.com') {
    // vimeo.com/ID[/HASH], /channels/NAME/ID, /groups/NAME/videos/ID, /album/N/video/ID, /showcase/N/video/ID
    const shapes = [[], ['channels', '*'], ['groups', '*', 'videos'], ['album', '*', 'video'], ['showcase', '*', 'video']]
    const shape = shapes.find((want) => parts.length > want.length && want.every((part, i) => part === '*' || part === parts[i]) && /^\d{5,12}$/.test(parts[want.length]))
    if (!shape) return null
    id = parts[shape.length]
    const rest = parts.slice(shape.length + 1)
    if (rest.length > 1 || (rest.length === 1 && !/^[0-9a-f]{6,20}$/.test(rest[0]))) return null
    hash = rest[0] ?? url.searchParams.get('h')
  } else return null
  if (!id || !/^\d{5,12}$/.test(id)) return null
  const embedUrl = `https://player.vimeo.com/video/${id}${hash && /^[0-9a-f]{6,20}$/.test(hash) ? `?h=${hash}` : ''}`
  return match({
    provider: 'Vimeo',
    type: 'video',
    id,
    embedUrl,
    embedHtml: iframe(embedUrl, 'Vimeo video player', 640, 360, 'autoplay; fullscreen; picture-in-picture'),
    canonicalUrl: `https://vimeo.com/${id}${hash ? `/${hash}` : ''}`,
  })
}

// TikTok ----------------------------------------------------------------------------------------

function tiktok(url: URL): PatternMatch | null {
  const host = bareHost(url)
  const parts = segments(url)
  if (host === 'vm.tiktok.com' || host === 'vt.tiktok.com') {
    if (parts.length !== 1 || !/^[A-Za-z0-9]{5,16}$/.test(parts[0])) return null
    // A share link: only the platform's redirect names the video, so a fetch completes this answer.
    return match({ provider: 'TikTok', type: 'video', id: null, embedUrl: null })
  }
  if (host !== 'tiktok.com') return null
  let id: string | undefined
  let user: string | null = null
  let type: MediaType = 'video'
  if (parts.length === 3 && /^@[\w.]{1,40}$/.test(parts[0]) && (parts[1] === 'video' || parts[1] === 'photo')) {
    user = parts[0]
    id = parts[2]
    type = parts[1] === 'photo' ? 'image' : 'video'
  } else if (parts.length === 3 && parts[0] === 'embed' && parts[1] === 'v2') id = parts[2]
  else if (parts.length === 2 && parts[0] === 'embed') id = parts[1]
  else if (parts.length === 2 && parts[0] === 'v') id = parts[1].replace(/\.html$/, '')
  if (!id || !/^\d{15,21}$/.test(id)) return null
  const embedUrl = `https://www.tiktok.com/embed/v2/${id}`
  return match({
    provider: 'TikTok',
    type,
    id,
    embedUrl,
    embedHtml: iframe(embedUrl, 'TikTok video', 325, 740, 'encrypted-media; fullscreen'),
    author: user,
    canonicalUrl: user ? `https://www.tiktok.com/${user}/${type === 'image' ? 'photo' : 'video'}/${id}` : null,
  })
}

// X / Twitter -----------------------------------------------------------------------------------

const X_HOSTS = new Set(['twitter.com', 'x.com', 'fxtwitter.com', 'vxtwitter.com', 'fixupx.com'])
/** First path segments that are pages of the site, never a user name. */
const X_RESERVED = new Set(['home', 'explore', 'search', 'settings', 'notifications', 'messages', 'compose', 'login', 'signup', 'tos', 'privacy', 'intent', 'share', 'hashtag'])

function twitter(url: URL): PatternMatch | null {
  if (!X_HOSTS.has(bareHost(url))) return null
  const parts = segments(url)
  let user: string | null = null
  let id: string | undefined
  if (parts[0] === 'i' && parts[1] === 'web' && parts[2] === 'status') id = parts[3]
  else if (parts[0] === 'i' && parts[1] === 'status') id = parts[2]
  else if (parts.length >= 3 && (parts[1] === 'status' || parts[1] === 'statuses') && /^\w{1,15}$/.test(parts[0]) && !X_RESERVED.has(parts[0].toLowerCase())) {
    user = parts[0]
    id = parts[2]
    // Anything after the id must be the post's own photo or video view (`/photo/1`, `/video/1`).
    const rest = parts.slice(3)
    if (rest.length && !(rest.length === 2 && (rest[0] === 'photo' || rest[0] === 'video') && /^\d$/.test(rest[1]))) return null
  }
  if (!id || !/^\d{1,20}$/.test(id)) return null
  const canonicalUrl = `https://x.com/${user ?? 'i/web'}/status/${id}`
  return match({
    provider: 'X',
    type: 'post',
    id,
    embedUrl: `https://platform.twitter.com/embed/Tweet.html?id=${id}`,
    embedHtml: `<blockquote class="twitter-tweet"><a href="${escapeAttr(`https://twitter.com/${user ?? 'i/web'}/status/${id}`)}"></a></blockquote><script async src="https://platform.twitter.com/widgets.js" charset="utf-8"></script>`,
    author: user ? `@${user}` : null,
    canonicalUrl,
  })
}

// Instagram -------------------------------------------------------------------------------------

function instagram(url: URL): PatternMatch | null {
  if (!['instagram.com', 'instagr.am'].includes(bareHost(url))) return null
  let parts = segments(url)
  // instagram.com/USER/p/CODE/ and /USER/reel/CODE/ as well as /p/CODE/.
  if (parts.length >= 3 && ['p', 'reel', 'tv'].includes(parts[1]) && /^[\w.]{1,30}$/.test(parts[0])) parts = parts.slice(1)
  if (parts[parts.length - 1] === 'embed') parts = parts.slice(0, -1)
  if (parts.length !== 2 || !['p', 'reel', 'reels', 'tv'].includes(parts[0]) || !/^[A-Za-z0-9_-]{5,40}$/.test(parts[1])) return null
  const kind = parts[0] === 'reels' ? 'reel' : parts[0]
  const canonicalUrl = `https://www.instagram.com/${kind}/${parts[1]}/`
  return match({
    provider: 'Instagram',
    type: kind === 'p' ? 'post' : 'video',
    id: parts[1],
    embedUrl: `${canonicalUrl}embed/`,
    embedHtml: `<blockquote class="instagram-media" data-instgrm-permalink="${escapeAttr(canonicalUrl)}" data-instgrm-version="14"><a href="${escapeAttr(canonicalUrl)}"></a></blockquote><script async src="https://www.instagram.com/embed.js"></script>`,
    canonicalUrl,
  })
}

// SoundCloud ------------------------------------------------------------------------------------

/** soundcloud.com/NAME pages that belong to the site, not to a user. */
const SOUNDCLOUD_RESERVED = new Set(['discover', 'stream', 'search', 'you', 'upload', 'charts', 'pages', 'settings', 'messages', 'notifications', 'terms-of-use', 'jobs', 'imprint', 'people', 'tags', 'popular', 'mobile', 'signin', 'logout', 'feed'])

function soundcloud(url: URL): PatternMatch | null {
  const host = bareHost(url)
  const parts = segments(url)
  if (host === 'on.soundcloud.com') {
    if (parts.length !== 1 || !/^[A-Za-z0-9]{4,20}$/.test(parts[0])) return null
    return match({ provider: 'SoundCloud', type: 'audio', id: null, embedUrl: null })
  }
  if (host !== 'soundcloud.com') return null
  if (parts.length < 2 || !/^[\w-]{2,50}$/.test(parts[0]) || SOUNDCLOUD_RESERVED.has(parts[0].toLowerCase())) return null
  let type: MediaType
  let id: string
  if (parts.length === 2 && /^[\w-]{1,255}$/.test(parts[1]) && !['sets', 'tracks', 'albums', 'likes', 'reposts', 'followers', 'following', 'popular-tracks', 'comments', 'playlists'].includes(parts[1])) {
    type = 'audio'
    id = `${parts[0]}/${parts[1]}`
  } else if (parts.length === 3 && parts[1] === 'sets' && /^[\w-]{1,255}$/.test(parts[2])) {
    type = 'playlist'
    id = `${parts[0]}/sets/${parts[2]}`
  } else return null
  const canonicalUrl = `https://soundcloud.com/${id}`
  const embedUrl = `https://w.soundcloud.com/player/?url=${encodeURIComponent(canonicalUrl)}`
  return match({
    provider: 'SoundCloud',
    type,
    id,
    embedUrl,
    embedHtml: iframe(embedUrl, 'SoundCloud player', '100%', type === 'playlist' ? 450 : 166, 'autoplay'),
    author: parts[0],
    canonicalUrl,
  })
}

// Spotify ---------------------------------------------------------------------------------------

const SPOTIFY_TYPES: Record<string, MediaType> = { track: 'audio', album: 'album', playlist: 'playlist', episode: 'audio', show: 'playlist', artist: 'profile' }

function spotify(url: URL): PatternMatch | null {
  if (bareHost(url) !== 'open.spotify.com') return null
  let parts = segments(url)
  if (parts[0] && /^intl-[a-z]{2}(-[a-z]{2})?$/i.test(parts[0])) parts = parts.slice(1)
  if (parts[0] === 'embed') parts = parts.slice(1)
  if (parts.length !== 2 || !hasKey(SPOTIFY_TYPES, parts[0]) || !/^[A-Za-z0-9]{22}$/.test(parts[1])) return null
  const [kind, id] = parts
  const embedUrl = `https://open.spotify.com/embed/${kind}/${id}`
  return match({
    provider: 'Spotify',
    type: SPOTIFY_TYPES[kind],
    id,
    embedUrl,
    embedHtml: iframe(embedUrl, 'Spotify player', '100%', kind === 'track' || kind === 'episode' ? 152 : 352, 'autoplay; clipboard-write; encrypted-media; fullscreen; picture-in-picture'),
    canonicalUrl: `https://open.spotify.com/${kind}/${id}`,
  })
}

// Twitch ----------------------------------------------------------------------------------------

const TWITCH_RESERVED = new Set(['directory', 'settings', 'p', 'downloads', 'search', 'videos', 'jobs', 'turbo', 'subscriptions', 'inventory', 'wallet', 'drops', 'friends', 'messages', 'login', 'signup', 'store', 'prime', 'privacy', 'legal'])

function twitch(url: URL, options: PatternOptions): PatternMatch | null {
  const host = bareHost(url)
  const parts = segments(url)
  const parent = `parent=${encodeURIComponent(options.embedParent ?? 'localhost')}`
  let found: { type: MediaType; id: string; player: string; canonicalUrl: string; author: string | null } | null = null
  if (host === 'clips.twitch.tv') {
    if (parts.length === 1 && /^[\w-]{5,100}$/.test(parts[0]) && parts[0] !== 'embed') {
      const slug = parts[0]
      found = { type: 'video', id: slug, player: `https://clips.twitch.tv/embed?clip=${slug}&${parent}`, canonicalUrl: `https://clips.twitch.tv/${slug}`, author: null }
    }
  } else if (host === 'twitch.tv' || host === 'go.twitch.tv') {
    if (parts.length === 2 && parts[0] === 'videos' && /^\d{5,12}$/.test(parts[1])) {
      const id = parts[1]
      found = { type: 'video', id, player: `https://player.twitch.tv/?video=v${id}&${parent}`, canonicalUrl: `https://www.twitch.tv/videos/${id}`, author: null }
    } else if (parts.length === 3 && parts[1] === 'clip' && /^\w{3,25}$/.test(parts[0]) && /^[\w-]{5,100}$/.test(parts[2])) {
      const slug = parts[2]
      found = { type: 'video', id: slug, player: `https://clips.twitch.tv/embed?clip=${slug}&${parent}`, canonicalUrl: `https://clips.twitch.tv/${slug}`, author: parts[0] }
    } else if (parts.length === 1 && /^\w{3,25}$/.test(parts[0]) && !TWITCH_RESERVED.has(parts[0].toLowerCase())) {
      const channel = parts[0].toLowerCase()
      found = { type: 'live', id: channel, player: `https://player.twitch.tv/?channel=${channel}&${parent}`, canonicalUrl: `https://www.twitch.tv/${channel}`, author: parts[0] }
    }
  }
  if (!found) return null
  const embedUrl = found.player
  return match({
    provider: 'Twitch',
    type: found.type,
    id: found.id,
    embedUrl,
    embedHtml: iframe(embedUrl, 'Twitch player', 620, 378, 'autoplay; fullscreen'),
    author: found.author,
    canonicalUrl: found.canonicalUrl,
  })
}

// Reddit ----------------------------------------------------------------------------------------

function reddit(url: URL): PatternMatch | null {
  const host = bareHost(url)
  const parts = segments(url)
  if (host === 'redd.it') {
    if (parts.length !== 1 || !/^[a-z0-9]{5,10}$/.test(parts[0])) return null
    return match({ provider: 'Reddit', type: 'post', id: parts[0], embedUrl: null, canonicalUrl: `https://www.reddit.com/comments/${parts[0]}/` })
  }
  if (host === 'v.redd.it') {
    if (parts.length < 1 || !/^[a-z0-9]{10,16}$/.test(parts[0])) return null
    return match({ provider: 'Reddit', type: 'video', id: parts[0], embedUrl: null })
  }
  if (host === 'i.redd.it') {
    if (parts.length !== 1 || !/^[a-z0-9]{10,16}\.(jpe?g|png|gif|webp)$/i.test(parts[0])) return null
    return match({ provider: 'Reddit', type: 'image', id: parts[0].replace(/\.\w+$/, ''), embedUrl: null, thumbnail: url.href })
  }
  if (!['reddit.com', 'old.reddit.com', 'new.reddit.com', 'np.reddit.com', 'sh.reddit.com'].includes(host)) return null
  // /r/SUB/s/CODE: a share link, resolved by the site's redirect.
  if (parts.length === 4 && parts[0] === 'r' && parts[2] === 's' && /^\w{3,21}$/.test(parts[1]) && /^[A-Za-z0-9]{5,16}$/.test(parts[3])) {
    return match({ provider: 'Reddit', type: 'post', id: null, embedUrl: null })
  }
  let sub: string | null = null
  let rest = parts
  if ((parts[0] === 'r' || parts[0] === 'user' || parts[0] === 'u') && parts[1] && /^\w{2,21}$/.test(parts[1])) {
    sub = `${parts[0] === 'r' ? 'r' : 'user'}/${parts[1]}`
    rest = parts.slice(2)
  }
  if (rest[0] !== 'comments' || !rest[1] || !/^[a-z0-9]{5,10}$/.test(rest[1]) || rest.length > 4) return null
  const id = rest[1]
  // A permalink to one comment (`.../comments/ID/slug/COMMENT`) is still a post-like thing to show.
  const path = `${sub ? `${sub}/` : ''}comments/${id}/${rest[2] ? `${rest[2]}/` : ''}`
  const canonicalUrl = `https://www.reddit.com/${path}${rest[3] ? `${rest[3]}/` : ''}`
  const embedUrl = `https://embed.reddit.com/${path}${rest[3] ? `${rest[3]}/` : ''}`
  return match({
    provider: 'Reddit',
    type: 'post',
    id,
    embedUrl,
    embedHtml: `<blockquote class="reddit-embed-bq" data-embed-height="316"><a href="${escapeAttr(canonicalUrl)}"></a></blockquote><script async src="https://embed.reddit.com/widgets.js" charset="UTF-8"></script>`,
    author: sub?.startsWith('user/') ? `u/${sub.slice(5)}` : null,
    canonicalUrl,
  })
}

// Dailymotion -----------------------------------------------------------------------------------

function dailymotion(url: URL): PatternMatch | null {
  const host = bareHost(url)
  const parts = segments(url)
  let id: string | null | undefined
  if (host === 'dai.ly') id = parts.length === 1 ? parts[0] : null
  else if (host === 'dailymotion.com') {
    if (parts.length === 2 && parts[0] === 'video') id = parts[1]
    else if (parts.length === 3 && parts[0] === 'embed' && parts[1] === 'video') id = parts[2]
  } else if (host === 'geo.dailymotion.com' && /^\/player(\/[\w-]+)?\.html$/.test(url.pathname)) id = url.searchParams.get('video')
  else return null
  // Ids start with x and go on with letters and digits; the old URL form appended `_title-slug`.
  const found = id ? /^(x[a-z0-9]{4,12})(?:_[\w-]*)?$/i.exec(id) : null
  if (!found) return null
  id = found[1]
  const embedUrl = `https://www.dailymotion.com/embed/video/${id}`
  return match({
    provider: 'Dailymotion',
    type: 'video',
    id,
    embedUrl,
    embedHtml: iframe(embedUrl, 'Dailymotion video player', 640, 360, 'autoplay; fullscreen; picture-in-picture; web-share'),
    thumbnail: `https://www.dailymotion.com/thumbnail/video/${id}`,
    canonicalUrl: `https://www.dailymotion.com/video/${id}`,
  })
}

// Loom and Streamable (cheap extras) ------------------------------------------------------------

function loom(url: URL): PatternMatch | null {
  if (bareHost(url) !== 'loom.com') return null
  const parts = segments(url)
  if (parts.length !== 2 || !['share', 'embed'].includes(parts[0]) || !/^[0-9a-f]{32}$/.test(parts[1])) return null
  const embedUrl = `https://www.loom.com/embed/${parts[1]}`
  return match({ provider: 'Loom', type: 'video', id: parts[1], embedUrl, embedHtml: iframe(embedUrl, 'Loom video', 640, 360, 'fullscreen'), canonicalUrl: `https://www.loom.com/share/${parts[1]}` })
}

const STREAMABLE_RESERVED = new Set(['login', 'signup', 'upload', 'about', 'pricing', 'terms', 'privacy', 'blog', 'help', 'settings', 'documentation', 'clipper', 'videos', 'community'])

function streamable(url: URL): PatternMatch | null {
  if (bareHost(url) !== 'streamable.com') return null
  let parts = segments(url)
  if (parts[0] === 'e' || parts[0] === 'o') parts = parts.slice(1)
  if (parts.length !== 1 || !/^[a-z0-9]{3,10}$/.test(parts[0]) || STREAMABLE_RESERVED.has(parts[0])) return null
  const embedUrl = `https://streamable.com/e/${parts[0]}`
  return match({ provider: 'Streamable', type: 'video', id: parts[0], embedUrl, embedHtml: iframe(embedUrl, 'Streamable video', 640, 360, 'fullscreen'), canonicalUrl: `https://streamable.com/${parts[0]}` })
}

const FAMILIES: Array<(url: URL, options: PatternOptions) => PatternMatch | null> = [youtube, vimeo, tiktok, twitter, instagram, soundcloud, spotify, twitch, reddit, dailymotion, loom, streamable]

/** The providers the patterns know, for the docs and the CLI's help. */
export const PATTERN_PROVIDERS = ['YouTube', 'YouTube Music', 'Vimeo', 'TikTok', 'X', 'Instagram', 'SoundCloud', 'Spotify', 'Twitch', 'Reddit', 'Dailymotion', 'Loom', 'Streamable']

/** The known media `url` is, or null (only http(s) URLs are recognised). */
export function matchPattern(url: string | URL, options: PatternOptions = {}): PatternMatch | null {
  let parsed: URL
  try {
    parsed = typeof url === 'string' ? new URL(url) : url
  } catch {
    return null
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null
  for (const family of FAMILIES) {
    const found = family(parsed, options)
    if (found) return found
  }
  return null
}
