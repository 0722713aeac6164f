/** @file Whether the tests that compile C (the virtual NPU, the OrtApi slot check) can run here. */
import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { systemTestsSkipped } from './lavapipe'

const hasCompiler = ['c++', 'g++', 'clang++', 'cc'].some((name) => (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, name))))

/**
 * Why the compiling tests are skipped, or null when they run. `npm test` installs a compiler first or stops
 * (scripts/system-deps.sh), so only TANDEM_SKIP_SYSTEM_TESTS=1 on a machine without one skips them.
 */
export const compilerSkipReason: string | null = hasCompiler || !systemTestsSkipped ? null : 'TANDEM_SKIP_SYSTEM_TESTS=1 and no C/C++ compiler on PATH'
