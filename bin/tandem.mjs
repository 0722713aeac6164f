#!/usr/bin/env node
// Runs the TypeScript CLI directly through tsx, so `npx tandem` works right after `npm ci` with no build step.
import { register } from 'tsx/esm/api'

register()
const { main } = await import('../main/cli/main.ts')
process.exitCode = await main(process.argv.slice(2))
