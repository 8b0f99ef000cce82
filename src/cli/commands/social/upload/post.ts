import { Args } from '@oclif/core'
import type { UploadResult } from '../../../../shared/types.js'
import { PlazaCommand } from '../../../base.js'

export default class UploadPost extends PlazaCommand<typeof UploadPost> {
  static override description = 'Upload an image for a post; prints its url (use the path with post create).'
  static override examples = ['<%= config.bin %> social upload post ./photo.jpg', '<%= config.bin %> social upload post ./photo.jpg --json']
  static override args = { file: Args.string({ description: 'the file to upload', required: true }) }

  async run(): Promise<UploadResult> {
    const result = await this.upload('post', this.args.file)
    this.human(result.url)
    return result
  }
}
