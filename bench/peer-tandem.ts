/**
 * @file Tandem as a benchmark peer: the engine's public runner API (`openModelWorker` from
 * main/engine/runtime: a worker-backed session, forward(tokens, pos) -> last logits), with greedy
 * argmax in JS so it does the same work per token as the llama.cpp peer.
 */
import { openModelWorker, type ModelWorkerClient } from '../main/engine/runtime'
import type { BenchPeer } from './peer'
import type { PeerInit } from './protocol'

/** Index of the largest logit (first one on ties). */
export function argmax(logits: Float32Array): number {
  let best = 0
  let bestValue = -Infinity
  for (let i = 0; i < logits.length; i++) {
    if (logits[i] > bestValue) {
      bestValue = logits[i]
      best = i
    }
  }
  return best
}

class TandemPeer implements BenchPeer {
  constructor(
    private readonly runner: ModelWorkerClient,
    readonly details: Readonly<Record<string, string | number | boolean>>
  ) {}

  async reset(pos: number): Promise<void> {
    await this.runner.truncate(pos)
  }

  async evaluate(tokens: readonly number[], pos: number): Promise<number> {
    return argmax(await this.runner.forward(tokens, pos))
  }

  async decode(first: number, pos: number, steps: number): Promise<number[]> {
    const out: number[] = []
    let token = first
    for (let i = 0; i < steps; i++) {
      token = argmax(await this.runner.forward([token], pos + i))
      out.push(token)
    }
    return out
  }

  async dispose(): Promise<void> {
    await this.runner.dispose()
  }
}

/** Opens the model (compiling its graph on a cache miss) with `init.threads` ORT intra-op threads. */
export async function openTandemPeer(init: PeerInit): Promise<BenchPeer> {
  const runner = await openModelWorker(init.modelPath, { threads: init.threads, maxContext: init.contextSize, cacheDir: init.graphCacheDir })
  const info = runner.compileInfo
  return new TandemPeer(runner, {
    threads: init.threads,
    contextLength: runner.contextLength,
    graphCacheHit: info.cacheHit,
    compileMs: Math.round(info.compileMs),
    sessionMs: Math.round(info.sessionMs)
  })
}
