/**
 * @file llama.cpp as a benchmark peer, through node-llama-cpp 3.21.1 from bench/peers (installed on
 * demand, never part of the app's install). Loaded by file URL and driven through runtime-checked
 * property reads, so `tsc` passes without the package. CPU backend only (`gpu: false`; the default
 * picks Vulkan on lavapipe here, toolchain G9). Tokens go through LlamaContextSequence.evaluate, the
 * library's own generation loop, with greedy sampling (temperature 0) and EOS not stopping it.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { callMethod, describe, isRecord, prop, record } from './guards'
import type { BenchPeer } from './peer'
import type { PeerInit } from './protocol'

/** node-llama-cpp's package folder inside bench/peers. */
function nodeLlamaCppDir(peersDir: string): string {
  return join(peersDir, 'node_modules', 'node-llama-cpp')
}

function num(obj: unknown, key: string, what: string): number {
  const v = prop(obj, key, what)
  if (typeof v !== 'number') throw new TypeError(`${what}.${key}: expected a number, got ${describe(v)}`)
  return v
}

/** One `next()` of an async generator of tokens: the token, or null when it finished. */
async function nextToken(generator: unknown): Promise<number | null> {
  const step = record(await callMethod(generator, 'next', 'evaluate generator'), 'evaluate generator step')
  if (step.done === true) return null
  const v = step.value
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new TypeError(`evaluate yielded ${describe(v)}, expected a token id`)
  return v
}

/** Greedy, no penalties, and an EOS token is yielded like any other so the step count is exact. */
const GREEDY = { temperature: 0, yieldEogToken: true } as const

class LlamaPeer implements BenchPeer {
  constructor(
    private readonly sequence: unknown,
    private readonly owners: readonly unknown[],
    readonly details: Readonly<Record<string, string | number | boolean>>
  ) {}

  private get cached(): number {
    return num(this.sequence, 'nextTokenIndex', 'sequence')
  }

  async reset(pos: number): Promise<void> {
    const end = this.cached
    if (pos < end) await callMethod(this.sequence, 'eraseContextTokenRanges', 'sequence', [{ start: pos, end }])
    if (this.cached !== pos) throw new Error(`llama.cpp sequence holds ${this.cached} tokens after reset to ${pos}`)
  }

  /** Runs `tokens` and takes `count` greedy tokens from the generator, then closes it (the last one is not evaluated). */
  private async generate(tokens: readonly number[], pos: number, count: number): Promise<number[]> {
    if (this.cached !== pos) throw new Error(`llama.cpp sequence holds ${this.cached} tokens, expected ${pos}`)
    const generator = callMethod(this.sequence, 'evaluate', 'sequence', [...tokens], GREEDY)
    const out: number[] = []
    try {
      while (out.length < count) {
        const token = await nextToken(generator)
        if (token === null) throw new Error(`llama.cpp stopped after ${out.length} of ${count} tokens`)
        out.push(token)
      }
    } finally {
      await callMethod(generator, 'return', 'evaluate generator', undefined)
    }
    return out
  }

  async evaluate(tokens: readonly number[], pos: number): Promise<number> {
    const [token] = await this.generate(tokens, pos, 1)
    return token
  }

  async decode(first: number, pos: number, steps: number): Promise<number[]> {
    return this.generate([first], pos, steps)
  }

  async dispose(): Promise<void> {
    // sequence, context, model, llama: innermost first
    for (const o of [this.sequence, ...this.owners]) await callMethod(o, 'dispose', 'llama.cpp object')
  }
}

/** Loads node-llama-cpp's CPU backend, the model and a one-sequence context with `init.threads` threads. */
export async function openLlamaPeer(init: PeerInit): Promise<BenchPeer> {
  const entry = pathToFileURL(join(nodeLlamaCppDir(init.peersDir), 'dist', 'index.js')).href
  const mod: unknown = await import(entry)
  const llama = await callMethod(mod, 'getLlama', 'node-llama-cpp', {
    gpu: false,
    build: 'never',
    logLevel: 'error',
    // no cap of its own: the context's thread count is the one used
    maxThreads: 0
  })
  const gpu = prop(llama, 'gpu', 'llama')
  if (gpu !== false) throw new Error(`node-llama-cpp chose GPU backend ${describe(gpu)}; the benchmark needs the CPU backend`)
  const release = prop(llama, 'llamaCppRelease', 'llama')
  const model = await callMethod(llama, 'loadModel', 'llama', { modelPath: init.modelPath, gpuLayers: 0 })
  const context = await callMethod(model, 'createContext', 'model', {
    contextSize: init.contextSize,
    batchSize: init.batchSize,
    sequences: 1,
    threads: { ideal: init.threads, min: init.threads }
  })
  const sequence = callMethod(context, 'getSequence', 'context')
  const flash = prop(context, 'flashAttention', 'context')
  return new LlamaPeer(sequence, [context, model, llama], {
    threads: init.threads,
    gpu: false,
    cpuMathCores: num(llama, 'cpuMathCores', 'llama'),
    buildType: String(prop(llama, 'buildType', 'llama')),
    llamaCppRelease: isRecord(release) ? String(release.release) : 'unknown',
    // llama.cpp's own build report: which CPU kernels (AVX2, AVX512, ...) the prebuilt binary uses
    systemInfo: String(prop(llama, 'systemInfo', 'llama')),
    contextSize: num(context, 'contextSize', 'context'),
    batchSize: num(context, 'batchSize', 'context'),
    idealThreads: num(context, 'idealThreads', 'context'),
    flashAttention: typeof flash === 'boolean' ? flash : String(flash),
    useMmap: prop(model, 'useMmap', 'model') === true
  })
}
