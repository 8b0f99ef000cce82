#!/usr/bin/env node
// On every start oclif checks the Node version against its own engines (>=18, below ours), loading
// semver for it: a tenth of `plaza --version`. Imported after, hence the dynamic import.
process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
const { execute } = await import('@oclif/core')

await execute({ dir: import.meta.url })
