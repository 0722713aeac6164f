/**
 * @file The virtual NPU: our own plugin execution-provider library (test/virtual-npu/virtual_npu.cc), built on
 * demand with the system's C++ compiler and the ONNX Runtime headers vendored beside it, then registered like
 * any vendor's provider library. It declares one NPU-type device, takes only static-shape nodes from an op list
 * and runs them on the CPU (optionally at a modelled speed), so the NPU path runs in CI. It is a test provider:
 * never shipped in the app, always labelled as simulated.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readFile, readdir, rename, rm } from 'node:fs/promises'
import { delimiter, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { readLibraryCounters, readLibraryString } from './ort-c/library'
import type { OrtCRuntime, RegisteredLibrary } from './ort-c/runtime'

/** The provider's EP name, as ONNX Runtime lists it. */
export const VIRTUAL_NPU_EP = 'TandemVirtualNPU'

/** The name Tandem registers the library under. */
export const VIRTUAL_NPU_REGISTRATION = 'tandem-virtual-npu'

/** How the UI and the benches label the device. */
export const VIRTUAL_NPU_LABEL = 'Virtual NPU (test provider, runs on the CPU)'

/** The source folder, relative to the repository root. */
const SOURCE_DIR = join('test', 'virtual-npu')
const SOURCE_FILE = 'virtual_npu.cc'

/** How long one compile may take (a ~700-line file: ~4 s on a 2-core VM). */
const BUILD_TIMEOUT_MS = 180_000

/** The repository root: the nearest folder above this file holding test/virtual-npu (null in a packaged app). */
export function virtualNpuSourceDir(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 8; i++) {
    const candidate = join(dir, SOURCE_DIR)
    if (existsSync(join(candidate, SOURCE_FILE))) return candidate
    const up = dirname(dir)
    if (up === dir) break
    dir = up
  }
  return null
}

/** The library's file name on this OS. */
function libraryFileName(hash: string): string {
  if (process.platform === 'win32') return `tandem_virtual_npu-${hash}.dll`
  if (process.platform === 'darwin') return `libtandem_virtual_npu-${hash}.dylib`
  return `libtandem_virtual_npu-${hash}.so`
}

/** The C++ compiler: $CXX, else the first of c++, g++, clang++ on PATH. */
function findCompiler(): string {
  const fromEnv = process.env.CXX
  if (fromEnv) return fromEnv
  for (const name of ['c++', 'g++', 'clang++']) {
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      if (dir && existsSync(join(dir, name))) return join(dir, name)
    }
  }
  throw new Error('building the virtual NPU needs a C++17 compiler (c++, g++ or clang++ on PATH, or $CXX); none was found')
}

/** Options for `buildVirtualNpu`. */
export interface VirtualNpuBuildOptions {
  /** where built libraries are kept (default: <repo>/.cache/virtual-npu) */
  readonly outDir?: string
  /** called once with a line saying it is compiling (only when it does) */
  readonly onBuild?: (message: string) => void
}

/**
 * Builds the virtual NPU library unless a build of the same source and headers is already there; returns its
 * path. The file is named by a hash of its inputs and written under a temporary name first, so concurrent
 * builders (parallel test files) never load a half-written library.
 */
export async function buildVirtualNpu(options: VirtualNpuBuildOptions = {}): Promise<string> {
  const source = virtualNpuSourceDir()
  if (source === null) throw new Error(`the virtual NPU is a test provider built from a source checkout (${SOURCE_DIR}/${SOURCE_FILE} was not found)`)
  if (process.platform === 'win32') throw new Error('building the virtual NPU on Windows is not supported (it needs a GCC- or Clang-style compiler)')
  const include = join(source, 'include')
  const hash = createHash('sha256')
  hash.update(process.platform).update(process.arch)
  for (const file of [join(source, SOURCE_FILE), ...(await readdir(include)).sort().map((f) => join(include, f))]) hash.update(await readFile(file))
  const outDir = options.outDir ?? join(dirname(dirname(source)), '.cache', 'virtual-npu')
  const out = join(outDir, libraryFileName(hash.digest('hex').slice(0, 12)))
  if (existsSync(out)) return out
  await mkdir(outDir, { recursive: true })
  const compiler = findCompiler()
  options.onBuild?.(`building the virtual NPU with ${compiler} -> ${out}`)
  const tmp = `${out}.${process.pid}.${Date.now()}.tmp`
  const shared = process.platform === 'darwin' ? ['-dynamiclib', '-undefined', 'dynamic_lookup'] : ['-shared']
  const args = ['-std=c++17', '-O2', '-fPIC', ...shared, '-fvisibility=hidden', '-Wall', '-Wextra', `-I${include}`, '-o', tmp, join(source, SOURCE_FILE), '-lpthread']
  try {
    await promisify(execFile)(compiler, args, { timeout: BUILD_TIMEOUT_MS, maxBuffer: 8 * 1024 * 1024 })
    await rename(tmp, out)
  } catch (e) {
    const stderr = typeof e === 'object' && e !== null && 'stderr' in e ? String(e.stderr).trim() : ''
    throw new Error(`building the virtual NPU failed: ${stderr || (e instanceof Error ? e.message : String(e))}`)
  } finally {
    await rm(tmp, { force: true })
  }
  return out
}

/** Builds (when needed) and registers the virtual NPU with `runtime`; a second call returns the first registration. */
export async function registerVirtualNpu(runtime: OrtCRuntime, options: VirtualNpuBuildOptions = {}): Promise<RegisteredLibrary> {
  const existing = runtime.registeredLibraries().find((l) => l.name === VIRTUAL_NPU_REGISTRATION)
  if (existing) return existing
  return runtime.registerProviderLibrary(VIRTUAL_NPU_REGISTRATION, resolve(await buildVirtualNpu(options)))
}

/** The virtual NPU's counters since its library was loaded (process-wide). */
export interface VirtualNpuStats {
  readonly nodesClaimed: number
  readonly nodesRefused: number
  /** fused subgraphs compiled from ONNX (one per run of consecutive claimed nodes per session; loading an EPContext blob does not count) */
  readonly graphsCompiled: number
  /** fused subgraph executions */
  readonly graphRuns: number
  /** nodes executed (a fused subgraph's node count per run) */
  readonly nodesRun: number
  /** wall time inside the device, throughput model included, ms */
  readonly busyMs: number
  /** time the throughput model asked for, ms (0 without one) */
  readonly modelledMs: number
  /** EPContext compiled blobs written (one per fused subgraph of a session with ep.context_enable=1) */
  readonly contextBlobsWritten: number
  /** EPContext compiled blobs loaded instead of compiling (one per EPContext node of an opened context model) */
  readonly contextBlobsLoaded: number
  /** compile time the `compile_ms` option asked for, ms (cold compiles only; 0 without the option) */
  readonly modelledCompileMs: number
  /** the reason the device last refused a node, '' if it never did */
  readonly lastRefusal: string
}

/** Reads the counters of the virtual NPU library at `path` (loaded in this process). */
export function virtualNpuStats(path: string): VirtualNpuStats {
  const [claimed, refused, compiled, runs, nodes, busyNs, modelledNs, blobsWritten, blobsLoaded, compileNs] = readLibraryCounters(path, 'TandemVirtualNpu_Stats', 10).map(Number)
  return {
    nodesClaimed: claimed ?? 0,
    nodesRefused: refused ?? 0,
    graphsCompiled: compiled ?? 0,
    graphRuns: runs ?? 0,
    nodesRun: nodes ?? 0,
    busyMs: (busyNs ?? 0) / 1e6,
    modelledMs: (modelledNs ?? 0) / 1e6,
    contextBlobsWritten: blobsWritten ?? 0,
    contextBlobsLoaded: blobsLoaded ?? 0,
    modelledCompileMs: (compileNs ?? 0) / 1e6,
    lastRefusal: readLibraryString(path, 'TandemVirtualNpu_LastRefusal')
  }
}
