#!/usr/bin/env node
import { createRequire } from 'node:module'

// On every start oclif checks the Node version against its own engines (>=18, below ours), loading
// semver for it: a tenth of `plaza --version`.
process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'

// The build bundles @oclif/core into one file (src/cli/vendor-oclif.ts), which loads in about half
// the time of its ~470 files. Put in the require cache under the installed package's path, it is
// what every `import '@oclif/core'` gets (ours and the plugins'), so there is only one oclif. Used
// only while it is the installed version; otherwise (no build yet, dependencies updated) oclif
// loads as usual.
const require = createRequire(import.meta.url)
try {
  const bundle = require.resolve('../dist/vendor/oclif-core/index.cjs')
  if (require('../dist/vendor/oclif-core/package.json').version === require('@oclif/core/package.json').version) {
    require(bundle)
    require.cache[require.resolve('@oclif/core')] = require.cache[bundle]
  }
} catch {
  // No bundle: the installed package loads below.
}
const { execute } = await import('@oclif/core')

await execute({ dir: import.meta.url })
