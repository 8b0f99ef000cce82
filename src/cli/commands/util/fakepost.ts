import { Flags } from '@oclif/core'
import { PlazaCommand } from '../../base.js'
import type { CardCommandOutput } from '../../maker.js'

export default class UtilFakepost extends PlazaCommand<typeof UtilFakepost> {
  static override description = `Make a social-post card image (GET /api/fakepost): avatar, name, @username, the text with colour emoji and CJK, counts and time. A small "generated" mark is always drawn.

--avatar is a local file, an http(s) URL or an uploads/... path (default: initials on a colour). With --url the server does the work; without, it runs here.`
  static override examples = [
    '<%= config.bin %> util fakepost --username ada --name "Ada Lovelace" --text "The engine works 🎉" --verified',
    '<%= config.bin %> util fakepost --username plaza --text "你好, world" --dark --likes 1200 -o card.png --json',
  ]
  static override flags = {
    username: Flags.string({ description: 'the handle, without @', required: true }),
    text: Flags.string({ description: 'the post (at most 1000 characters)', required: true }),
    name: Flags.string({ description: 'display name; default: the username' }),
    avatar: Flags.string({ description: 'avatar image: local file, http(s) URL or uploads/... path' }),
    verified: Flags.boolean({ description: 'draw the verified mark' }),
    dark: Flags.boolean({ description: 'dark theme' }),
    likes: Flags.integer({ description: 'likes count', min: 0 }),
    replies: Flags.integer({ description: 'replies count', min: 0 }),
    reposts: Flags.integer({ description: 'reposts count', min: 0 }),
    time: Flags.string({ description: 'the time line as shown; default: now (UTC)' }),
    output: Flags.string({ char: 'o', description: 'where to write the PNG (- for stdout); default: fakepost-<username>.png' }),
  }

  async run(): Promise<CardCommandOutput> {
    const { runCardCommand, slug } = await import('../../maker.js')
    const { flags } = this
    const count = (n: number | undefined) => (n === undefined ? undefined : String(n))
    const result = await runCardCommand(
      this.target,
      () => this.client(),
      'fakepost',
      {
        username: flags.username,
        text: flags.text,
        name: flags.name,
        avatar: flags.avatar,
        verified: flags.verified ? 'true' : undefined,
        theme: flags.dark ? 'dark' : undefined,
        likes: count(flags.likes),
        replies: count(flags.replies),
        reposts: count(flags.reposts),
        time: flags.time,
      },
      flags.output ?? `fakepost-${slug(flags.username)}.png`,
    )
    if (result.output !== '-') this.human(result.output)
    return result
  }
}
