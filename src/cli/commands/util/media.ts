import { Args, Flags } from '@oclif/core'
import type { MediaAnswer } from '../../../shared/schemas/media.js'
import { PlazaCommand } from '../../base.js'

export default class UtilMedia extends PlazaCommand<typeof UtilMedia> {
  static override description = `Describe a media URL (GET /api/media): provider, type, title, author, thumbnail and the player to embed (docs/media.md).

Known URL shapes (YouTube, Vimeo, TikTok, X, Instagram, SoundCloud, Spotify, Twitch, Reddit, Dailymotion, Loom, Streamable) are recognised from the URL alone; then the page is fetched for its oEmbed, OpenGraph and Twitter card data, unless --no-fetch. With --url the server does the fetching; without, it runs here, through the same fetch guard.`
  static override examples = [
    '<%= config.bin %> util media https://youtu.be/dQw4w9WgXcQ',
    '<%= config.bin %> util media https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC --no-fetch',
    '<%= config.bin %> util media https://vimeo.com/76979871 --url http://127.0.0.1:8080 --json',
  ]
  static override args = {
    url: Args.string({ description: 'the page or media URL (http or https)', required: true }),
  }
  static override flags = {
    fetch: Flags.boolean({ description: 'fetch the page for its oEmbed, OpenGraph and Twitter data (--no-fetch: the URL pattern alone)', allowNo: true, default: true }),
  }

  async run(): Promise<MediaAnswer> {
    const { describeMediaUrl, formatMedia } = await import('../../media.js')
    const answer = await describeMediaUrl(this.target, this.args.url, this.flags.fetch)
    this.human(formatMedia(answer))
    return answer
  }
}
