/** @file Where tests find the shared trained models and a scratch folder. */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

export const repoRoot = resolve(import.meta.dirname, '..', '..')

/** `TANDEM_TEST_MODELS`, or `../shared/models` beside the checkout. */
export const sharedModels = process.env.TANDEM_TEST_MODELS ?? resolve(repoRoot, '..', 'shared', 'models')

/** Absolute path of a shared model file; throws a helpful error when the folder is missing. */
export function sharedModel(relative: string): string {
  const p = join(sharedModels, relative)
  if (!existsSync(p)) {
    throw new Error(`test model ${p} not found: set TANDEM_TEST_MODELS or place the shared models beside the checkout (see README)`)
  }
  return p
}

/** A fresh temp dir and its cleanup. */
export function tempDir(prefix = 'tandem-test-'): { dir: string; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) }
}
