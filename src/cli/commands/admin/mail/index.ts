import { Flags } from '@oclif/core'
import { asUsageError, dataDirFlag, formatTable, withDataDir } from '../../../admin.js'
import type { MailRecord } from '../../../../server/delivery/mail.js'
import { CliCommand } from '../../../command.js'

/** Operator command: the mail outbox of a local data directory (or its libsql server). Never a message's body: the links in it are secrets. */
export default class AdminMail extends CliCommand {
  static override description =
    "The mail outbox: password resets and verification links, pending, sent or given up, with tries and the SMTP server's last answer (never a message's body: its link is a secret). Records are kept 30 days."
  static override examples = ['<%= config.bin %> admin mail', '<%= config.bin %> admin mail --status failed', '<%= config.bin %> admin mail --json --limit 200']

  static override enableJsonFlag = true

  static override flags = {
    'data-dir': dataDirFlag,
    status: Flags.string({ description: 'only messages in this state', options: ['pending', 'sent', 'failed'] }),
    limit: Flags.integer({ description: 'how many, newest first', default: 50, min: 1, max: 1000 }),
  }

  async run(): Promise<MailRecord[]> {
    const { flags } = await this.parse(AdminMail).catch(asUsageError)
    const { listMail } = await import('../../../../server/delivery/mail.js')
    const mail = await withDataDir(this, flags['data-dir'], (services) => listMail(services.db, { status: flags.status as MailRecord['status'] | undefined, limit: flags.limit }))
    if (!this.jsonEnabled()) {
      if (mail.length === 0) this.log(flags.status ? `no ${flags.status} mail` : 'the outbox is empty')
      else {
        const when = (record: MailRecord) => (record.status === 'sent' ? `sent ${record.sent_at}` : record.status === 'pending' ? `next ${record.next_attempt_at}` : 'given up')
        const rows = mail.map((record) => [String(record.id), record.kind, record.to, record.status, String(record.attempts), record.created_at, when(record), record.last_error ?? ''])
        this.log(formatTable(['ID', 'KIND', 'TO', 'STATUS', 'TRIES', 'CREATED', 'WHEN', 'LAST ERROR'], rows))
      }
    }
    return mail
  }
}
