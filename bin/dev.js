#!/usr/bin/env -S node --import tsx --no-warnings
// Runs the CLI from the TypeScript sources (no build step), for development.
import { execute } from '@oclif/core'

await execute({ development: true, dir: import.meta.url })
