import { Flags } from '@oclif/core'
import type { CatalogListAnswer } from '../../../shared/schemas/catalog.js'
import { PlazaCommand } from '../../base.js'

export default class UtilList extends PlazaCommand<typeof UtilList> {
  static override description = `List the utility API's catalog: every operation, whether this server offers it and whether what backs it is configured.

With --url, asks that server (GET /api/list); without it, lists this build's catalog as a server started here with this environment would (PLAZA_<NAME>_BASE_URL, PLAZA_LLM_*).`

  static override examples = [
    '<%= config.bin %> util list',
    '<%= config.bin %> util list --group maker --offered',
    '<%= config.bin %> util list --no-offered --json',
    '<%= config.bin %> util list --url http://127.0.0.1:8080',
  ]

  static override flags = {
    group: Flags.string({ char: 'g', description: 'only this group (any letter case), e.g. system, maker, "image processing"' }),
    offered: Flags.boolean({ description: 'only the offered operations (--no-offered: only those not offered)', allowNo: true }),
  }

  async run(): Promise<CatalogListAnswer> {
    const { fetchCatalog, parseCatalogFilter } = await import('../../catalog.js')
    const filter = await parseCatalogFilter({ group: this.flags.group, offered: this.flags.offered === undefined ? undefined : this.flags.offered ? 'true' : 'false' })
    const answer = await fetchCatalog(this.target, filter)
    if (!this.jsonEnabled()) {
      const { formatCatalog } = await import('../../ui/catalog.js')
      this.log(formatCatalog(answer.operations, answer.message))
    }
    return answer
  }
}
