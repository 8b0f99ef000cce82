import { CliCommand } from '../command.js'

export interface VersionOutput {
  name: string
  version: string
  node: string
  platform: string
  arch: string
}

export default class Version extends CliCommand {
  static override description = 'Print the version of plaza, and the Node.js and platform it runs on (the same line as `plaza --version`).'
  static override examples = ['<%= config.bin %> version', '<%= config.bin %> version --json']
  static override enableJsonFlag = true

  async run(): Promise<VersionOutput> {
    await this.parse(Version)
    const { name, version } = this.config
    // oclif's own `--version` line: `plaza/0.1.0 linux-x64 node-v20.20.2`.
    if (!this.jsonEnabled()) this.log(this.config.userAgent)
    return { name, version, node: process.versions.node, platform: process.platform, arch: process.arch }
  }
}
