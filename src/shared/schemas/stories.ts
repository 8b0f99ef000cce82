import { z } from 'zod'
import { TEXT_LIMITS } from './auth.js'
import { altText, id, optionalUploadPath } from './common.js'

/** Stories live 24 hours (decisions §3). */
export const STORY_TTL_MS = 24 * 60 * 60 * 1000
export const STORY_CONTENT_TYPES = ['text', 'image', 'video'] as const
export const STORY_PRIVACY_TYPES = ['followers', 'public'] as const
export const STORY_TEXT_ALIGNMENTS = ['left', 'center', 'right'] as const
/** Ranges a story player can honour: font size in points, display time in seconds (a video story up to a minute). */
export const STORY_FONT_SIZE = { min: 8, max: 96, default: 24 } as const
export const STORY_DURATION = { min: 1, max: 60, default: 5 } as const
export const STORY_FONT_FAMILY_MAX = 64

/** Mobile clients send `null` or `""` for fields that do not apply; both mean "not given". */
const absentIfEmpty = (v: unknown) => (v === null || v === '' ? undefined : v)

const color = (name: string) =>
  z.preprocess(
    absentIfEmpty,
    z
      .string({ error: `${name} must be a string` })
      .regex(/^#[0-9A-Fa-f]{6}$/, `${name} must be a colour in #RRGGBB form`)
      .transform((c) => c.toUpperCase())
      .optional(),
  )

const intInRange = (name: string, range: { min: number; max: number }) =>
  z.preprocess(
    absentIfEmpty,
    z.coerce
      .number({ error: `${name} must be a number` })
      .int(`${name} must be a whole number`)
      .min(range.min, `${name} must be between ${range.min} and ${range.max}`)
      .max(range.max, `${name} must be between ${range.min} and ${range.max}`)
      .optional(),
  )

/**
 * The spec's Story creation input. Text stories need `text_content`; image and video stories need
 * `media_url` (an `uploads/stories/...` path of the caller's own upload, checked on the server) and
 * may carry `text_content` as a caption. Styling fields fall back to the defaults below.
 */
export const storyCreateInput = z
  .object({
    content_type: z.enum(STORY_CONTENT_TYPES, { error: `content_type must be one of ${STORY_CONTENT_TYPES.join(', ')}` }),
    text_content: z.preprocess(
      absentIfEmpty,
      z
        .string({ error: 'text_content must be a string' })
        .trim()
        .min(1, 'text_content must not be blank')
        .max(TEXT_LIMITS.storyText, `text_content must be at most ${TEXT_LIMITS.storyText} characters`)
        .optional(),
    ),
    background_color: color('background_color'),
    text_color: color('text_color'),
    font_family: z.preprocess(
      absentIfEmpty,
      z
        .string({ error: 'font_family must be a string' })
        .trim()
        .max(STORY_FONT_FAMILY_MAX, `font_family must be at most ${STORY_FONT_FAMILY_MAX} characters`)
        .optional(),
    ),
    font_size: intInRange('font_size', STORY_FONT_SIZE),
    text_alignment: z.preprocess(
      absentIfEmpty,
      z.enum(STORY_TEXT_ALIGNMENTS, { error: `text_alignment must be one of ${STORY_TEXT_ALIGNMENTS.join(', ')}` }).optional(),
    ),
    media_url: optionalUploadPath(['stories']),
    /** media_url described for screen readers (up to 1,500 characters; `""` or `null` for none). */
    media_alt: altText('media_alt').optional(),
    duration: intInRange('duration', STORY_DURATION),
    privacy_type: z.preprocess(
      absentIfEmpty,
      z.enum(STORY_PRIVACY_TYPES, { error: `privacy_type must be one of ${STORY_PRIVACY_TYPES.join(', ')}` }).default('public'),
    ),
  })
  .superRefine((input, ctx) => {
    if (input.content_type === 'text') {
      if (input.text_content === undefined) ctx.addIssue({ code: 'custom', path: ['text_content'], message: 'text_content is required for a text story' })
      if (input.media_url !== undefined) ctx.addIssue({ code: 'custom', path: ['media_url'], message: 'media_url is only for image and video stories' })
      if (input.media_alt) ctx.addIssue({ code: 'custom', path: ['media_alt'], message: 'media_alt describes the image or video of a story: a text story has none' })
    } else if (input.media_url === undefined) {
      ctx.addIssue({ code: 'custom', path: ['media_url'], message: `media_url is required for an ${input.content_type} story (upload the file with POST /upload/story first)` })
    }
  })
export type StoryCreateInput = z.input<typeof storyCreateInput>
export type StoryCreate = z.output<typeof storyCreateInput>

export const storyViewInput = z.object({ story_id: id('story_id') })
export type StoryViewInput = z.input<typeof storyViewInput>

export const storyIdInput = z.object({ story_id: id('story_id') })
