#!/usr/bin/env node
// `npm start`: the Electron app when Electron's binary is installed, otherwise the same app in the browser
// (`tandem serve`), saying so. npm ci skips the binary download (package.json allowScripts), so the
// fallback is the normal case on a fresh checkout. Extra arguments go to whichever runs.
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const args = process.argv.slice(2)

/** Electron's executable as its package records it (path.txt, written by its install script), or a reason why not. */
function electronBinary() {
  let pkgDir
  try {
    pkgDir = dirname(require.resolve('electron/package.json'))
  } catch {
    return { missing: 'the electron package is not installed' }
  }
  const pathFile = join(pkgDir, 'path.txt')
  if (!existsSync(pathFile)) return { missing: `${pathFile} does not exist; npm ci skips the download` }
  const binary = join(pkgDir, 'dist', readFileSync(pathFile, 'utf8').trim())
  return existsSync(binary) ? { binary } : { missing: `${binary} does not exist` }
}

const electron = electronBinary()
if (electron.binary !== undefined) {
  // electron-vite preview builds main, preload and renderer, then starts Electron on out/main/index.js.
  const cli = join(dirname(require.resolve('electron-vite/package.json')), 'bin', 'electron-vite.js')
  const child = spawn(process.execPath, [cli, 'preview', ...args], { cwd: root, stdio: 'inherit' })
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
  child.on('exit', (code, signal) => {
    process.exitCode = code ?? (signal === null ? 1 : 128)
  })
} else {
  process.stderr.write(
    `Electron's binary is not installed (${electron.missing}); starting browser mode instead.\n` +
      'To run the desktop app, install it with `node node_modules/electron/install.js` where the network allows.\n'
  )
  const { register } = await import('tsx/esm/api')
  register()
  const { main } = await import('../main/cli/main.ts')
  process.exitCode = await main(['serve', ...args])
}
