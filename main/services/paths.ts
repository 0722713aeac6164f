/**
 * @file Where the app keeps its data (database, compiled-graph cache) and where it looks for models.
 * Pure functions of the environment, so tests and the browser-mode server resolve the same folders
 * as the Electron app.
 */
import { existsSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { isRecord } from '../common/reader'
import { readTextCapped } from '../engine'

/** The folders the app uses. All absolute. */
export interface AppPaths {
  /** holds the database and the graph cache */
  readonly dataDir: string
  /** SQLite file of conversations, messages and settings */
  readonly databaseFile: string
  /** compiled ONNX graphs, keyed by content hash */
  readonly graphCacheDir: string
  /** model folders that are always scanned and cannot be removed in Settings, in order */
  readonly builtInModelDirs: readonly string[]
  /** Tandem's own models folder (the first built-in one): where downloads go, and whose models Remove deletes */
  readonly ownModelsDir: string
}

/** Inputs of resolveAppPaths; everything defaults to the real environment. */
export interface AppPathsOptions {
  /** overrides TANDEM_DATA_DIR and the per-OS default */
  readonly dataDir?: string
  /** extra built-in model folders (e.g. `tandem serve --models DIR`) */
  readonly modelDirs?: readonly string[]
  /**
   * Source checkout to take `../shared/models` from, when it exists; null turns it off (packaged app).
   * Default: the checkout this file is in, found by walking up to the `tandem` package.json.
   */
  readonly devRoot?: string | null
  readonly env?: NodeJS.ProcessEnv
  readonly platform?: NodeJS.Platform
  readonly homeDir?: string
}

/** Per-OS data folder: `%APPDATA%\Tandem`, `~/Library/Application Support/Tandem`, `$XDG_DATA_HOME/tandem`. */
export function defaultDataDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform, home: string): string {
  if (platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Tandem')
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'Tandem')
  const xdg = env.XDG_DATA_HOME
  return join(xdg !== undefined && xdg.startsWith('/') ? xdg : join(home, '.local', 'share'), 'tandem')
}

/** The user's own models folder: TANDEM_MODELS_DIR or `<home>/Tandem/models`. */
export function defaultModelsDir(env: NodeJS.ProcessEnv, home: string): string {
  const fromEnv = env.TANDEM_MODELS_DIR
  return fromEnv !== undefined && fromEnv !== '' ? resolve(fromEnv) : join(home, 'Tandem', 'models')
}

/** Resolves every folder the app uses; creates nothing. */
export function resolveAppPaths(options: AppPathsOptions = {}): AppPaths {
  const env = options.env ?? process.env
  const home = options.homeDir ?? homedir()
  const fromEnv = env.TANDEM_DATA_DIR
  const dataDir = resolve(
    options.dataDir ?? (fromEnv !== undefined && fromEnv !== '' ? fromEnv : defaultDataDir(env, options.platform ?? process.platform, home))
  )
  const ownModelsDir = defaultModelsDir(env, home)
  const modelDirs = [ownModelsDir, ...(options.modelDirs ?? []).map((d) => resolve(d))]
  const devRoot = options.devRoot === undefined ? findSourceRoot(import.meta.dirname) : options.devRoot
  if (devRoot !== null) {
    const shared = resolve(devRoot, '..', 'shared', 'models')
    if (isDirectory(shared)) modelDirs.push(shared)
  }
  return {
    dataDir,
    databaseFile: join(dataDir, 'tandem.db'),
    graphCacheDir: join(dataDir, 'graphs'),
    builtInModelDirs: [...new Set(modelDirs)],
    ownModelsDir
  }
}

/** Most parent folders findSourceRoot climbs (source: main/services; built: out/main). */
const MAX_ROOT_SEARCH_DEPTH = 6

/** Largest package.json read while looking for the source checkout (ours is a few kB). */
const MAX_PACKAGE_JSON_BYTES = 1 << 20

/** The nearest folder above `from` holding the `tandem` package.json, or null. */
export function findSourceRoot(from: string): string | null {
  let dir = resolve(from)
  for (let i = 0; i < MAX_ROOT_SEARCH_DEPTH; i++) {
    const pkg = join(dir, 'package.json')
    if (existsSync(pkg) && packageName(pkg) === 'tandem') return dir
    const parent = dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return null
}

function packageName(file: string): string | null {
  try {
    const parsed: unknown = JSON.parse(readTextCapped(file, MAX_PACKAGE_JSON_BYTES, 'package.json'))
    if (isRecord(parsed) && typeof parsed.name === 'string') return parsed.name
  } catch {
    // unreadable, not a regular file, too large or not JSON: not ours
  }
  return null
}

/** True when `path` exists and is a folder (never throws). */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}
