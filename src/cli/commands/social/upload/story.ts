import { Args } from '@oclif/core'
import type { UploadResult } from '../../../../shared/types.js'
import { PlazaCommand } from '../../../base.js'

export default class UploadStory extends PlazaCommand<typeof UploadStory> {
  static override description = 'Upload an image or video for a story; prints its url.'
  static override examples = ['<%= config.bin %> social upload story ./photo.jpg', '<%= config.bin %> social upload story ./photo.jpg --json']
  static override args = { file: Args.string({ description: 'the file to upload', required: true }) }

  async run(): Promise<UploadResult> {
    const result = await this.upload('story', this.args.file)
    this.human(result.url)
    return result
  }
}
