import type { SessionInfo } from '../../../../shared/types.js'
import { PlazaCommand } from '../../../base.js'

export default class Sessions extends PlazaCommand<typeof Sessions> {
  static override description = 'Your live sessions, newest first: where you are logged in (* marks this one).'
  static override examples = ['<%= config.bin %> social sessions', '<%= config.bin %> social sessions --json']

  async run(): Promise<{ sessions: SessionInfo[] }> {
    this.requireLogin()
    const { trpc } = await this.client()
    const list = await trpc.auth.sessions.query()
    for (const session of list.sessions) {
      const used = session.last_used_at ?? 'never'
      this.human(`${session.current ? '*' : ' '} ${session.id}\tsince ${session.created_at}\tlast used ${used}\t${session.user_agent || '(unknown client)'}`)
    }
    return list
  }
}
