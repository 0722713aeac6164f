/**
 * @file The long-context check: one 8,192-token prompt on the Llama-3.2-1B shape, each peer in a child
 * of its own (one after the other, so their memory never overlaps), with the child's resident memory
 * read after loading and after the prompt. The growth per token is compared with the KV cache's size
 * per token (Tandem: float32 K and V; llama.cpp: its default f16 cache).
 */
import { PeerChild } from './child-handle'
import { promptTokens, type GgufSummary } from './gguf-summary'
import type { BenchModelFile } from './models'
import { PEER_NAMES, type PeerName } from './protocol'
import { fmt } from './report'
import { errorLine, LLAMA_BATCH_SIZE } from './schedule'

/** Prompt length of the check. */
export const LONG_PROMPT_TOKENS = 8192
/** Context each child opens with: the prompt plus room for the greedy token. */
const LONG_CONTEXT_SIZE = LONG_PROMPT_TOKENS + 64
/** Seed of the prompt's token ids. */
const LONG_PROMPT_SEED = 8192
/** Bytes per cached K or V value: Tandem keeps float32 (runtime/session/kv-cache.ts), llama.cpp f16 by default. */
const KV_VALUE_BYTES: Readonly<Record<PeerName, number>> = { tandem: 4, 'llama.cpp': 2 }

/** One peer's run of the long prompt. */
export interface LongContextPeer {
  readonly peer: PeerName
  readonly threads: number
  readonly loadMs: number
  readonly prefillMs: number
  readonly rssAfterLoadBytes: number
  readonly rssAfterPrefillBytes: number
  readonly peakRssBytes: number | null
  /** K and V bytes per position: 2 · layers · kvHeads · headDim · value size */
  readonly kvBytesPerToken: number
}

/** The check's result: a record per peer, or its error. */
export interface LongContextRecord {
  readonly model: string
  readonly promptTokens: number
  readonly peers: ReadonlyArray<LongContextPeer | { readonly peer: PeerName; readonly error: string }>
}

/** Options of the check (the same folders as the model table). */
export interface LongContextOptions {
  readonly threads: number
  readonly graphCacheDir: string
  readonly peersDir: string
  readonly log: (line: string) => void
}

async function runPeer(peer: PeerName, model: BenchModelFile, summary: GgufSummary, prompt: readonly number[], options: LongContextOptions): Promise<LongContextPeer> {
  const child = await PeerChild.start({
    role: 'peer',
    peer,
    modelPath: model.path,
    threads: options.threads,
    contextSize: LONG_CONTEXT_SIZE,
    batchSize: LLAMA_BATCH_SIZE,
    graphCacheDir: options.graphCacheDir,
    peersDir: options.peersDir
  })
  let closed = false
  try {
    const before = await child.memory()
    const r = await child.run({ op: 'evaluate', tokens: prompt, pos: 0 })
    const after = await child.memory()
    const peakRssBytes = await child.close()
    closed = true
    const kvBytesPerToken = 2 * summary.nLayers * summary.nKvHeads * summary.headDim * KV_VALUE_BYTES[peer]
    options.log(`  long context ${child.label}: ${prompt.length} tokens in ${(r.ms / 1000).toFixed(1)} s, RSS ${fmt(before.rssBytes / 2 ** 20)} -> ${fmt(after.rssBytes / 2 ** 20)} MiB`)
    return {
      peer,
      threads: options.threads,
      loadMs: child.loadMs,
      prefillMs: r.ms,
      rssAfterLoadBytes: before.rssBytes,
      rssAfterPrefillBytes: after.rssBytes,
      peakRssBytes,
      kvBytesPerToken
    }
  } finally {
    if (!closed) await child.close().catch(() => null)
  }
}

/** Runs the long prompt on each peer in turn; a peer that fails is recorded with its error. */
export async function longContextCheck(model: BenchModelFile, summary: GgufSummary, options: LongContextOptions): Promise<LongContextRecord> {
  const prompt = promptTokens(summary, LONG_PROMPT_TOKENS, LONG_PROMPT_SEED)
  const peers: Array<LongContextPeer | { peer: PeerName; error: string }> = []
  for (const peer of PEER_NAMES) {
    try {
      peers.push(await runPeer(peer, model, summary, prompt, options))
    } catch (e) {
      peers.push({ peer, error: errorLine(e) })
      options.log(`  long context ${peer} failed: ${errorLine(e)}`)
    }
  }
  return { model: model.label, promptTokens: prompt.length, peers }
}

/** The check as a markdown section. */
export function renderLongContext(r: LongContextRecord): string {
  const mib = (b: number | null): string => (b === null ? '—' : fmt(b / 2 ** 20))
  const out = [
    `## Long context (${r.model}, ${r.promptTokens.toLocaleString('en-US')}-token prompt)`,
    '',
    '| peer | threads | load s | prefill s (tok/s) | RSS after load MiB | RSS after prompt MiB | growth MiB | growth per token KiB | KV cache per token KiB | peak RSS MiB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const p of r.peers) {
    if ('error' in p) {
      out.push(`| ${p.peer} | — | — | failed: ${p.error.replace(/\|/g, '/')} | — | — | — | — | — | — |`)
      continue
    }
    const growth = p.rssAfterPrefillBytes - p.rssAfterLoadBytes
    out.push(
      `| ${p.peer} | ${p.threads} | ${fmt(p.loadMs / 1000, 1)} | ${fmt(p.prefillMs / 1000, 1)} (${fmt(r.promptTokens / (p.prefillMs / 1000))}) | ` +
        `${mib(p.rssAfterLoadBytes)} | ${mib(p.rssAfterPrefillBytes)} | ${mib(growth)} | ${fmt(growth / r.promptTokens / 1024, 1)} | ` +
        `${fmt(p.kvBytesPerToken / 1024, 1)} | ${mib(p.peakRssBytes)} |`
    )
  }
  out.push(
    '',
    'RSS = the child\'s VmRSS right after loading (context opened for 8,256 positions) and right after the prompt; growth per token = the ' +
      'difference ÷ prompt tokens. KV cache per token = 2 (K, V) × layers × KV heads × head size × value size: float32 in Tandem ' +
      '(its cache grows with the conversation), f16 in llama.cpp (allocated for the whole context at load, so its growth is the ' +
      'pages first touched plus compute buffers). Growth above the KV cache is activations and compute buffers of the 8k prefill.'
  )
  return out.join('\n')
}
