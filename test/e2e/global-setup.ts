/**
 * @file Playwright global setup: makes sure out/renderer is built from the current sources, then starts the
 * real app in browser mode (`tandem serve`) on a fresh temporary data folder (a real SQLite file) with the
 * shared test models, and hands its launch URL to the tests through TANDEM_E2E_URL. The teardown it returns
 * stops the server and deletes the folder.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildVirtualNpu } from '../../main/engine/devices/virtual-npu'
import { compilerSkipReason } from '../devices/compiler'
import { startTinyModelHub } from '../helpers/loopback-hub'
import { repoRoot, sharedModels } from '../helpers/paths'
import { startServe, stopServe, type ServeProcess } from '../helpers/serve-process'
import { E2E_ENV, E2E_TOKEN_DELAY_MS } from './env'

/** Newest modification time (ms) of any file under `dir`. */
function newestMtimeMs(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtimeMs(path) : statSync(path).mtimeMs)
  }
  return newest
}

/** Rebuilds out/ with electron-vite when the renderer sources are newer than the built page. */
function ensureRendererBuilt(): void {
  const builtPage = join(repoRoot, 'out', 'renderer', 'index.html')
  const sourcesMs = Math.max(newestMtimeMs(join(repoRoot, 'renderer')), statSync(join(repoRoot, 'preload', 'api.ts')).mtimeMs)
  if (existsSync(builtPage) && statSync(builtPage).mtimeMs >= sourcesMs) return
  const result = spawnSync(process.execPath, [join(repoRoot, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], {
    cwd: repoRoot,
    stdio: ['ignore', 'inherit', 'inherit']
  })
  if (result.status !== 0) throw new Error(`electron-vite build failed (exit ${String(result.status)})`)
}

/** Starts the server; returns the teardown. */
export default async function globalSetup(): Promise<() => Promise<void>> {
  ensureRendererBuilt()
  const scratch = mkdtempSync(join(tmpdir(), 'tandem-e2e-'))
  const dataDir = join(scratch, 'data')
  const cacheDir = join(scratch, 'cache')
  mkdirSync(cacheDir)
  const models = sharedModels
  // The user's own models folder points somewhere that does not exist: the UI must show it as missing.
  const missingModelsDir = join(scratch, 'no-such-models-folder')
  const apiKey = randomBytes(24).toString('hex')
  const args = ['--port', '0', '--data-dir', dataDir, '--models', models, '--no-open', '--token-delay-ms', String(E2E_TOKEN_DELAY_MS), '--api', '--api-port', '0', '--api-key', apiKey]
  // The model catalog is one small model on a hub on loopback (the shared stories260K.gguf as its LFS file). A
  // download from the start stops halfway until it is paused, so the spec sees it move, pause and resume.
  const tiny = await startTinyModelHub(scratch)
  tiny.hub.mode = 'hold'
  let server: ServeProcess
  try {
    server = await startServe(args, { TANDEM_CACHE_DIR: cacheDir, TANDEM_MODELS_DIR: missingModelsDir, TANDEM_HUB_URL: tiny.hub.url, TANDEM_MODEL_CATALOG: tiny.catalogFile })
  } catch (err) {
    await tiny.hub.close()
    rmSync(scratch, { recursive: true, force: true })
    throw err
  }
  process.env[E2E_ENV.url] = server.url
  // the OpenAI-compatible API's line follows the launch URL's
  const api = await server.line(/OpenAI-compatible API: (http:\/\/127\.0\.0\.1:\d+\/v1) \(key: ([0-9a-f]+)\)/)
  if (api[2] !== apiKey) throw new Error('tandem serve printed another API key than it was given')
  process.env[E2E_ENV.apiUrl] = api[1]
  process.env[E2E_ENV.apiKey] = apiKey
  // the provider-library spec adds it through Settings, as a user adds a vendor's library
  process.env[E2E_ENV.virtualNpu] = compilerSkipReason === null ? await buildVirtualNpu() : ''
  process.env[E2E_ENV.dataDir] = dataDir
  process.env[E2E_ENV.missingModelsDir] = missingModelsDir
  return async () => {
    await stopServe(server.child)
    await tiny.hub.close()
    if (process.env.TANDEM_E2E_KEEP !== '1') rmSync(scratch, { recursive: true, force: true })
  }
}
