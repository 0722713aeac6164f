/**
 * @file Electron smoke test: the built app starts, shows its window with the chat UI, and the preload bridge
 * (`window.tandem`) answers. Needs the Electron binary, which `npm ci` here does not download (its install
 * script is disabled), so the test skips itself, with the reason, where the binary is absent.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { _electron as electron, expect, test } from '@playwright/test'

const repoRoot = resolve(import.meta.dirname, '..', '..')

/** The Electron binary's path, or why there is none. */
function electronBinary(): { path: string } | { missing: string } {
  try {
    const path: unknown = createRequire(import.meta.url)('electron')
    if (typeof path !== 'string') return { missing: 'require("electron") did not return a path' }
    return existsSync(path) ? { path } : { missing: `the Electron binary ${path} does not exist` }
  } catch (err) {
    return { missing: `the Electron binary is not installed (${err instanceof Error ? err.message : String(err)})` }
  }
}

const binary = electronBinary()

test('the Electron app opens its window and the preload bridge answers', async () => {
  test.skip('missing' in binary, 'missing' in binary ? binary.missing : '')
  if (!('path' in binary)) return
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-e2e-electron-'))
  const app = await electron.launch({
    executablePath: binary.path,
    args: [join(repoRoot, 'out', 'main', 'index.js'), '--no-sandbox'],
    env: { ...process.env, TANDEM_DATA_DIR: dataDir, TANDEM_CACHE_DIR: join(dataDir, 'cache') }
  })
  try {
    const window = await app.firstWindow()
    await expect(window.getByRole('textbox', { name: 'Message', exact: true })).toBeVisible()
    await expect(window.getByRole('button', { name: 'New chat' })).toBeVisible()
    const bridge: unknown = await window.evaluate('typeof window.tandem?.app?.version')
    expect(bridge).toBe('function')
    const version: unknown = await window.evaluate('window.tandem.app.version()')
    expect(typeof version).toBe('string')
  } finally {
    await app.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
})
