import { Flags } from '@oclif/core'
import type { UserProfile } from '../../../../shared/types.js'
import { PlazaCommand, UsageError } from '../../../base.js'

export default class ProfileUpdate extends PlazaCommand<typeof ProfileUpdate> {
  static override description = 'Change your display name, bio, avatar or privacy (only the flags given change).'
  static override examples = [
    '<%= config.bin %> social profile update --full-name "Alice Liddell" --bio "Down the rabbit hole #wonderland"',
    '<%= config.bin %> social profile update --bio ""',
    '<%= config.bin %> social profile update --avatar ./me.png',
    '<%= config.bin %> social profile update --private',
  ]

  static override flags = {
    'full-name': Flags.string({ char: 'n', description: 'display name' }),
    bio: Flags.string({ char: 'b', description: 'bio ("" clears it)' }),
    avatar: Flags.string({ description: 'image file to upload as the avatar' }),
    'remove-avatar': Flags.boolean({ description: 'remove the avatar', exclusive: ['avatar'] }),
    private: Flags.boolean({ description: 'make the account private: following it becomes a request you approve', exclusive: ['public'] }),
    public: Flags.boolean({ description: 'make the account public again (approves every pending request)', exclusive: ['private'] }),
  }

  async run(): Promise<UserProfile> {
    const { bio, avatar } = this.flags
    const fullName = this.flags['full-name']
    const isPrivate = this.flags.private ? true : this.flags.public ? false : undefined
    if (fullName === undefined && bio === undefined && avatar === undefined && !this.flags['remove-avatar'] && isPrivate === undefined) {
      throw new UsageError('nothing to change: give --full-name, --bio, --avatar, --remove-avatar, --private or --public')
    }
    this.requireLogin()
    const uploaded = avatar === undefined ? undefined : (await this.upload('avatar', avatar)).path
    const { trpc } = await this.client()
    const profile = await trpc.users.update.mutate({
      ...(fullName !== undefined && { full_name: fullName }),
      ...(bio !== undefined && { bio }),
      ...(uploaded !== undefined && { avatar: uploaded }),
      ...(this.flags['remove-avatar'] && { avatar: '' }),
      ...(isPrivate !== undefined && { is_private: isPrivate }),
    })
    await this.show({ kind: 'profile', profile })
    return profile
  }
}
