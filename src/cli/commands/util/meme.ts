import { Args, Flags } from '@oclif/core'
import { MEME_TEMPLATE_IDS } from '../../../shared/schemas/meme.js'
import { PlazaCommand, UsageError } from '../../base.js'
import type { CardCommandOutput } from '../../maker.js'

export default class UtilMeme extends PlazaCommand<typeof UtilMeme> {
  static override description = `Make a meme: a bundled template (or your own image) with classic outlined captions (GET /api/meme).

Templates: ${MEME_TEMPLATE_IDS.join(', ')} (docs/maker.md). With --image the picture is a local file, an http(s) URL or an uploads/... path instead. With --url the server does the work; without, it runs here.`
  static override examples = [
    '<%= config.bin %> util meme this-is-fine --top "Production is down" --bottom "This is fine"',
    '<%= config.bin %> util meme --image photo.jpg --top "When the tests pass" -o win.png',
    '<%= config.bin %> util meme two-buttons --top "Tabs" --bottom "Spaces" --url http://127.0.0.1:8080 --json',
  ]
  static override args = {
    template: Args.string({ description: `template id: ${MEME_TEMPLATE_IDS.join(', ')}`, required: false }),
  }
  static override flags = {
    top: Flags.string({ description: 'caption of the top box (at most 200 characters)' }),
    bottom: Flags.string({ description: 'caption of the bottom box (at most 200 characters)' }),
    image: Flags.string({ description: 'your own picture instead of a template: local file, http(s) URL or uploads/... path' }),
    output: Flags.string({ char: 'o', description: 'where to write the PNG (- for stdout); default: meme-<template>.png' }),
  }

  async run(): Promise<CardCommandOutput> {
    const { runCardCommand, slug } = await import('../../maker.js')
    const { template } = this.args
    if (!template && !this.flags.image) throw new UsageError(`give a TEMPLATE (${MEME_TEMPLATE_IDS.join(', ')}) or --image`)
    const output = this.flags.output ?? `meme-${slug(template ?? 'image')}.png`
    const result = await runCardCommand(this.target, () => this.client(), 'meme', { template, url: this.flags.image, top: this.flags.top, bottom: this.flags.bottom }, output)
    if (result.output !== '-') this.human(result.output)
    return result
  }
}
