import { Args } from '@oclif/core'
import type { UploadResult } from '../../../../shared/types.js'
import { PlazaCommand } from '../../../base.js'

export default class UploadAvatar extends PlazaCommand<typeof UploadAvatar> {
  static override description = 'Upload an image as your avatar (it becomes your avatar at once).'
  static override examples = ['<%= config.bin %> social upload avatar ./photo.jpg', '<%= config.bin %> social upload avatar ./photo.jpg --json']
  static override args = { file: Args.string({ description: 'the file to upload', required: true }) }

  async run(): Promise<UploadResult> {
    const result = await this.upload('avatar', this.args.file)
    this.human(result.url)
    return result
  }
}
