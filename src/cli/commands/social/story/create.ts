import { Flags } from '@oclif/core'
import { STORY_DURATION, STORY_FONT_SIZE, STORY_PRIVACY_TYPES, STORY_TEXT_ALIGNMENTS } from '../../../../shared/schemas/stories.js'
import type { Story } from '../../../../shared/types.js'
import { PlazaCommand, UsageError } from '../../../base.js'

export default class StoryCreate extends PlazaCommand<typeof StoryCreate> {
  static override description = 'Publish a story for 24 hours: styled text, or an image or video (--image uploads it first; --media is its old name).'
  static override examples = [
    '<%= config.bin %> social story create --text "Good morning" --background-color "#FF7A2F" --text-color "#FFFFFF"',
    '<%= config.bin %> social story create --image ./beach.jpg --text "caption" --alt "Waves on a sandy beach" --privacy followers',
    '<%= config.bin %> social story create --image ./clip.mp4 --duration 15 --json',
  ]

  static override flags = {
    text: Flags.string({ char: 't', description: 'the story text (a caption for --image)', helpGroup: 'CONTENT' }),
    // --image as on posts and comments; --media (-m) was its name before and still works.
    image: Flags.string({
      char: 'i',
      aliases: ['media'],
      charAliases: ['m'],
      description: 'image (JPEG, PNG, WebP, GIF) or video (MP4, WebM) file to upload (also --media)',
      helpGroup: 'CONTENT',
    }),
    alt: Flags.string({ description: 'alt text for --image: what a screen reader says for it (up to 1,500 characters)', helpGroup: 'CONTENT' }),
    'background-color': Flags.string({ description: 'text story background, #RRGGBB', helpGroup: 'STYLE' }),
    'text-color': Flags.string({ description: 'text colour, #RRGGBB', helpGroup: 'STYLE' }),
    'font-family': Flags.string({ description: 'font name', helpGroup: 'STYLE' }),
    'font-size': Flags.integer({ description: `font size in points (${STORY_FONT_SIZE.min} to ${STORY_FONT_SIZE.max})`, helpGroup: 'STYLE' }),
    'text-alignment': Flags.string({ description: 'text alignment', options: [...STORY_TEXT_ALIGNMENTS], helpGroup: 'STYLE' }),
    duration: Flags.integer({ description: `seconds on screen (${STORY_DURATION.min} to ${STORY_DURATION.max})` }),
    privacy: Flags.string({ description: 'who sees it', options: [...STORY_PRIVACY_TYPES], default: 'public' }),
  }

  async run(): Promise<Story> {
    const { text, image } = this.flags
    if (text === undefined && image === undefined) throw new UsageError('give --text for a text story, or --image FILE for an image or video story')
    if (this.flags.alt !== undefined && image === undefined) throw new UsageError('--alt describes the --image of a story: give one')
    this.requireLogin()
    const uploaded = image === undefined ? undefined : await this.upload('story', image)
    const { trpc } = await this.client()
    const story = await trpc.stories.create.mutate({
      content_type: uploaded ? (/\.(mp4|webm)$/.test(uploaded.path) ? 'video' : 'image') : 'text',
      text_content: text,
      media_url: uploaded?.path,
      media_alt: this.flags.alt,
      background_color: this.flags['background-color'],
      text_color: this.flags['text-color'],
      font_family: this.flags['font-family'],
      font_size: this.flags['font-size'],
      text_alignment: this.flags['text-alignment'] as (typeof STORY_TEXT_ALIGNMENTS)[number] | undefined,
      duration: this.flags.duration,
      privacy_type: this.flags.privacy as (typeof STORY_PRIVACY_TYPES)[number],
    })
    await this.show({ kind: 'story', story })
    return story
  }
}
