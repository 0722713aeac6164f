/**
 * @file Probes an execution provider in a child process (probe-child.ts) with a timeout, and caches the
 * result for the life of this process. A child process, not a worker thread: a segfault in a GPU driver
 * kills the whole process it happens in, and the toolchain notes record WebGPU doing exactly that. Probes
 * of non-CPU EPs run one after another (never two GPU probes at once); the CPU probe may overlap them.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { EpProbeResult } from './device'
import { parseProbeMessage } from './probe-protocol'
import { probeTargetEp, type ProbeTarget } from './probe-run'

/** Default time one EP probe may take. A first WebGPU probe on lavapipe compiles shaders with LLVM (seen: 17 s for GQA, cold cache). */
export const DEFAULT_PROBE_TIMEOUT_MS = 60_000
/** Longest timeout accepted. */
export const MAX_PROBE_TIMEOUT_MS = 10 * 60_000
/** Tail of the child's stderr kept for a crash report, in characters. */
const STDERR_TAIL_CHARS = 1500

/** Harmless lines Dawn prints on every WebGPU start (toolchain notes §6); dropped from crash reports. */
const HARMLESS_STDERR = /artificially reduced from/

/** Options for one probe. */
export interface ProbeOptions {
  /** kill the child and report failure after this many ms (default DEFAULT_PROBE_TIMEOUT_MS) */
  readonly timeoutMs?: number
}

const cache = new Map<string, Promise<EpProbeResult>>()
/** Non-CPU probes chain here so only one GPU probe runs at a time. */
let gpuQueue: Promise<unknown> = Promise.resolve()

/** Forgets cached probe results (tests; a "re-probe" button). */
export function clearProbeCache(): void {
  cache.clear()
}

/**
 * Probes `target` (an onnxruntime-node EP name, or an EP device behind provider libraries) once per process;
 * concurrent callers share the probe; timeouts and crashes are not cached.
 */
export function probeEp(target: ProbeTarget, options: ProbeOptions = {}): Promise<EpProbeResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_PROBE_TIMEOUT_MS) {
    return Promise.reject(new RangeError(`timeoutMs must be an integer from 1 to ${MAX_PROBE_TIMEOUT_MS}, got ${timeoutMs}`))
  }
  const key = typeof target === 'string' ? target : JSON.stringify(target)
  const cached = cache.get(key)
  if (cached !== undefined) return cached
  let pending: Promise<ChildOutcome>
  if (target === 'cpu') {
    pending = probeInChild(target, timeoutMs)
  } else {
    pending = gpuQueue.then(() => probeInChild(target, timeoutMs))
    gpuQueue = pending.catch(() => undefined)
  }
  const entry = pending.then((r) => {
    if (r.crashed) cache.delete(key)
    return r.result
  })
  cache.set(key, entry)
  entry.catch(() => cache.delete(key))
  return entry
}

/**
 * Starts probe-child for `target` (its argument: the EP name, or the target as JSON): from source through
 * tsx's ESM hooks, built as a plain .js file beside this one.
 */
function startChild(target: ProbeTarget): ChildProcess {
  const self = import.meta.url
  const fromSource = self.endsWith('.ts')
  const entry = fileURLToPath(new URL(fromSource ? './probe-child.ts' : './probe-child.js', self))
  return fork(entry, [typeof target === 'string' ? target : JSON.stringify(target)], {
    execArgv: fromSource ? ['--import', import.meta.resolve('tsx/esm')] : [],
    // Electron's binary runs the child as plain Node with this; harmless under Node
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization: 'json'
  })
}

/** A failed result that says why, with the probe time so far. */
function failed(ep: string, reason: string, startMs: number): EpProbeResult {
  return { ep, ok: false, reason, staticShapesOnly: false, checks: [], probeMs: performance.now() - startMs }
}

/** A probe child's outcome; `crashed` marks outcomes worth retrying (timeout, crash, no answer). */
interface ChildOutcome {
  readonly result: EpProbeResult
  readonly crashed: boolean
}

/** Runs one child. */
function probeInChild(target: ProbeTarget, timeoutMs: number): Promise<ChildOutcome> {
  const startMs = performance.now()
  const ep = probeTargetEp(target)
  return new Promise((resolve) => {
    let settled = false
    let stderr = ''
    const finish = (result: EpProbeResult, crashed: boolean): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({ result, crashed })
    }
    const stderrTail = (): string => {
      const lines = stderr.split('\n').filter((l) => l.trim() !== '' && !HARMLESS_STDERR.test(l))
      const tail = lines.join(' | ').replace(/\u001b\[[0-9;]*m/g, '')
      return tail.length > STDERR_TAIL_CHARS ? `…${tail.slice(-STDERR_TAIL_CHARS)}` : tail
    }
    let child: ChildProcess
    try {
      child = startChild(target)
    } catch (e) {
      finish(failed(ep, `could not start the probe process: ${e instanceof Error ? e.message : String(e)}`, startMs), true)
      return
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      finish(failed(ep, `probe timed out after ${timeoutMs} ms and was killed`, startMs), true)
    }, timeoutMs)
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-16 * STDERR_TAIL_CHARS)
    })
    child.on('message', (raw: unknown) => {
      try {
        const msg = parseProbeMessage(raw)
        if (msg.type === 'error') finish(failed(ep, `probe failed: ${msg.message}`, startMs), false)
        else if (msg.result.ep !== ep) finish(failed(ep, `probe child answered for '${msg.result.ep}'`, startMs), true)
        else finish(msg.result, false)
      } catch (e) {
        finish(failed(ep, e instanceof Error ? e.message : String(e), startMs), true)
      }
    })
    child.on('error', (e) => finish(failed(ep, `probe process error: ${e.message}`, startMs), true))
    // 'close' (not 'exit'): it follows the IPC channel's end, so a result sent just before exiting is never lost
    child.on('close', (code, signal) => {
      const how = signal !== null ? `was killed by ${signal}` : `exited with code ${code}`
      const tail = stderrTail()
      finish(failed(ep, `probe process ${how} before reporting${tail !== '' ? `; stderr: ${tail}` : ''}`, startMs), true)
    })
  })
}
