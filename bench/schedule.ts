/**
 * @file How one model is benchmarked. First Tandem opens the file in a child that only loads (the run's
 * graph cache is empty for it: the first load, with its compile and its peak RSS), then every peer ×
 * thread count gets its own child (loaded one after the other; Tandem's are graph-cache hits). A probe pass, which
 * is also the discarded warm-up, runs every phase on every child in rotating order and picks each peer's
 * faster thread count per phase. Then each phase runs `reps` times on the winners, alternating A/B
 * (T L, L T, T L ...) so load from elsewhere on the machine hits both peers alike.
 */
import { PeerChild } from './child-handle'
import { cpuSnapshot, otherCpuPct } from './cpu-load'
import { promptTokens, type GgufSummary } from './gguf-summary'
import type { BenchModelFile } from './models'
import { PEER_NAMES, type Details, type PeerName } from './protocol'
import { median } from './stats'

/** The measured phases. */
export type PhaseId = 'prefill128' | 'prefill512' | 'decodeShort' | 'decode1024'

/** One phase: prefill `tokens` prompt tokens from an empty cache, or decode `steps` tokens after `tokens` cached ones. */
export interface PhaseSpec {
  readonly id: PhaseId
  readonly kind: 'prefill' | 'decode'
  readonly tokens: number
  readonly steps: number
}

/** Prefill at 128 and 512 prompt tokens; decode 128 tokens at short (16) and at 1,024-token context. */
export const PHASES: readonly PhaseSpec[] = [
  { id: 'prefill128', kind: 'prefill', tokens: 128, steps: 0 },
  { id: 'prefill512', kind: 'prefill', tokens: 512, steps: 0 },
  { id: 'decodeShort', kind: 'decode', tokens: 16, steps: 128 },
  { id: 'decode1024', kind: 'decode', tokens: 1024, steps: 128 }
]

/** KV positions each child holds: 1024 context + 128 decoded, rounded up. */
export const CONTEXT_SIZE = 2048
/** llama.cpp batch (its default n_ubatch); Tandem chunks prefill by its own DEFAULT_PREFILL_CHUNK. */
export const LLAMA_BATCH_SIZE = 512
/** Decode steps per probe run (thread choice needs a rate, not the full 128). */
const PROBE_DECODE_STEPS = 16
/** Pause before each timed call, so the previous child's spinning worker threads have parked. */
const SETTLE_MS = 50
/** Seed of the prompt token ids (same prompt for every peer and model). */
const PROMPT_SEED = 1234

/** Settings of one model's run. */
export interface ScheduleOptions {
  readonly reps: number
  readonly probeRounds: number
  readonly threadCounts: readonly number[]
  readonly graphCacheDir: string
  readonly peersDir: string
  readonly log: (line: string) => void
}

/** One child's load. */
export interface LoadRecord {
  readonly peer: PeerName
  readonly threads: number
  readonly loadMs: number
  readonly details: Details
  readonly peakRssBytes: number | null
}

/** One peer's timings in one phase. */
export interface PeerPhaseRecord {
  readonly threads: number
  /** milliseconds of each measured rep (prefill: until the first greedy token; decode: all steps) */
  readonly ms: readonly number[]
  /** per measured rep: percent of all cores other processes used meanwhile (null without /proc) */
  readonly otherCpuPct: readonly (number | null)[]
  /** probe (warm-up) milliseconds per thread count, for the thread choice */
  readonly probeMs: Readonly<Record<string, readonly number[]>>
  /** the greedy tokens of the first measured rep (prefill: one) */
  readonly tokens: readonly number[]
  /** decode phases: milliseconds of the untimed prefill of the context */
  readonly contextPrefillMs: number | null
}

/** One phase of one model: the peers that ran it (a peer that failed to load has no entry). */
export interface PhaseRecord {
  readonly phase: PhaseSpec
  readonly peers: Partial<Record<PeerName, PeerPhaseRecord>>
}

/** What went wrong on one model: per peer (its load), and 'run' for a failure after loading. */
export type ModelErrors = Partial<Record<PeerName | 'run', string>>

/** Everything measured on one model. */
export interface ModelRecord {
  readonly model: BenchModelFile
  readonly summary: GgufSummary
  /** Tandem's first open of the file with an empty graph cache (load only, in a child of its own); null if it failed */
  readonly coldLoad: LoadRecord | null
  /** the measured children's loads (Tandem's are graph-cache hits) */
  readonly loads: readonly LoadRecord[]
  readonly phases: readonly PhaseRecord[]
  readonly errors: ModelErrors
  readonly wallMs: number
}

/** A failure as one line for the table (the first line of the message, without the stack). */
export function errorLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e)
  return text.split('\n')[0].slice(0, 300)
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Children of one model: peer -> threads -> child. */
type Children = Map<PeerName, Map<number, PeerChild>>

function childOf(children: Children, peer: PeerName, threads: number): PeerChild {
  const c = children.get(peer)?.get(threads)
  if (!c) throw new Error(`no ${peer} child with ${threads} threads`)
  return c
}

/** A timed call's result, with how busy other processes kept the machine meanwhile. */
interface Timed {
  readonly ms: number
  readonly tokens: readonly number[]
  /** percent of all cores used by other processes during the call; null without /proc */
  readonly otherCpuPct: number | null
}

async function timed(child: PeerChild, body: Parameters<PeerChild['run']>[0]): Promise<Timed> {
  const before = cpuSnapshot(child.pid)
  const r = await child.run(body)
  return { ...r, otherCpuPct: otherCpuPct(before, cpuSnapshot(child.pid)) }
}

/** Prefill from an empty cache; returns ms and the greedy token. */
async function prefill(child: PeerChild, prompt: readonly number[]): Promise<Timed> {
  await child.run({ op: 'reset', pos: 0 })
  await sleep(SETTLE_MS)
  return timed(child, { op: 'evaluate', tokens: prompt, pos: 0 })
}

/** Decode `steps` after a prepared context of `ctx` tokens whose greedy next token is `first`. */
async function decode(child: PeerChild, ctx: number, first: number, steps: number): Promise<Timed> {
  await child.run({ op: 'reset', pos: ctx })
  await sleep(SETTLE_MS)
  return timed(child, { op: 'decode', first, pos: ctx, steps })
}

/** Fills a child's cache with the first `ctx` prompt tokens; returns the greedy next token. */
async function prepare(child: PeerChild, prompt: readonly number[], ctx: number): Promise<{ ms: number; first: number }> {
  const r = await prefill(child, prompt.slice(0, ctx))
  return { ms: r.ms, first: r.tokens[0] }
}

/** Rotates `items` left by `k` (rep-dependent order, so no child always runs first). */
function rotate<T>(items: readonly T[], k: number): T[] {
  const n = items.length
  return items.map((_, i) => items[(i + k) % n])
}

/** Starts one peer child on the model. */
function startPeer(model: BenchModelFile, peer: PeerName, threads: number, options: ScheduleOptions, contextSize = CONTEXT_SIZE): Promise<PeerChild> {
  return PeerChild.start({
    role: 'peer',
    peer,
    modelPath: model.path,
    threads,
    contextSize,
    batchSize: LLAMA_BATCH_SIZE,
    graphCacheDir: options.graphCacheDir,
    peersDir: options.peersDir
  })
}

/** Tandem's first open of the model (the run's graph cache is empty for it): load time and the load's peak RSS. */
async function coldTandemLoad(model: BenchModelFile, options: ScheduleOptions): Promise<LoadRecord> {
  const threads = Math.max(...options.threadCounts)
  const child = await startPeer(model, 'tandem', threads, options)
  const peakRssBytes = await child.close()
  options.log(`  first open (cold graph cache) ${child.label} in ${(child.loadMs / 1000).toFixed(1)} s ${JSON.stringify(child.details)}`)
  return { peer: 'tandem', threads, loadMs: child.loadMs, details: child.details, peakRssBytes }
}

/**
 * Benchmarks one model; children are always closed, also on failure. A peer that fails to load is
 * left out (its error recorded) and the other still runs; a failure while running ends the model with
 * what was measured so far.
 */
export async function benchmarkModel(model: BenchModelFile, summary: GgufSummary, options: ScheduleOptions): Promise<ModelRecord> {
  const t0 = performance.now()
  const { log, threadCounts } = options
  const errors: ModelErrors = {}
  let coldLoad: LoadRecord | null = null
  try {
    coldLoad = await coldTandemLoad(model, options)
  } catch (e) {
    errors.tandem = errorLine(e)
    log(`  tandem failed to load: ${errors.tandem}`)
  }
  const peers = PEER_NAMES.filter((p) => errors[p] === undefined)
  const prompt = promptTokens(summary, Math.max(...PHASES.map((p) => p.tokens)), PROMPT_SEED)
  const children: Children = new Map(peers.map((p) => [p, new Map<number, PeerChild>()]))
  const all: PeerChild[] = []
  const loads: LoadRecord[] = []
  const phases: PhaseRecord[] = []
  try {
    for (const threads of threadCounts) {
      for (const peer of peers.filter((p) => errors[p] === undefined)) {
        try {
          const child = await startPeer(model, peer, threads, options)
          children.get(peer)?.set(threads, child)
          all.push(child)
          log(`  loaded ${child.label} in ${(child.loadMs / 1000).toFixed(1)} s ${JSON.stringify(child.details)}`)
        } catch (e) {
          errors[peer] = errorLine(e)
          log(`  ${peer} failed to load: ${errors[peer]}`)
        }
      }
    }
    const running = peers.filter((p) => errors[p] === undefined)
    if (running.length > 0) {
      try {
        await runPhases(running, children, prompt, phases, options)
      } catch (e) {
        errors.run = errorLine(e)
        log(`  failed while running: ${errors.run}`)
      }
    }
  } finally {
    for (const c of all) {
      const peakRssBytes = await c.close().catch(() => null)
      loads.push({ peer: c.init.peer, threads: c.init.threads, loadMs: c.loadMs, details: c.details, peakRssBytes })
    }
  }
  return { model, summary, coldLoad, loads, phases, errors, wallMs: performance.now() - t0 }
}

/** Probe (warm-up and thread choice), then every phase on each running peer's winning child; appends to `phases`. */
async function runPhases(peerNames: readonly PeerName[], children: Children, prompt: readonly number[], phases: PhaseRecord[], options: ScheduleOptions): Promise<void> {
  const { log, threadCounts } = options
  const all = peerNames.flatMap((p) => [...(children.get(p)?.values() ?? [])])
  // probe = warm-up + thread choice: every child runs every phase (decode: short probe at short context)
  const shortCtx = PHASES.find((p) => p.id === 'decodeShort')?.tokens ?? 16
  const probeFirst = new Map<PeerChild, number>()
  for (const c of all) probeFirst.set(c, (await prepare(c, prompt, shortCtx)).first)
  const probe = new Map<string, number[]>() // `${phase}|${label}` -> ms
  for (let round = 0; round < options.probeRounds; round++) {
    for (const phase of PHASES.filter((p) => p.id !== 'decode1024')) {
      for (const c of rotate(all, round)) {
        const r = phase.kind === 'prefill'
          ? await prefill(c, prompt.slice(0, phase.tokens))
          : await decode(c, shortCtx, probeFirst.get(c) ?? 0, PROBE_DECODE_STEPS)
        const key = `${phase.id}|${c.label}`
        probe.set(key, [...(probe.get(key) ?? []), r.ms])
      }
    }
    log(`  probe round ${round + 1}/${options.probeRounds} done`)
  }
  // decode at 1,024 uses the thread count that won the short-context decode probe
  const probeKey = (phase: PhaseSpec): PhaseId => (phase.id === 'decode1024' ? 'decodeShort' : phase.id)
  const winner = (peer: PeerName, phase: PhaseSpec): number => {
    let best = threadCounts[0]
    let bestMs = Infinity
    for (const t of threadCounts) {
      // fastest probe run: robust to a probe that collided with other work on the machine
      const ms = Math.min(...(probe.get(`${probeKey(phase)}|${childOf(children, peer, t).label}`) ?? [Infinity]))
      if (ms < bestMs) {
        bestMs = ms
        best = t
      }
    }
    return best
  }

  for (const phase of PHASES) {
    const chosen = peerNames.map((peer) => ({ peer, threads: winner(peer, phase) }))
    const runners = chosen.map(({ peer, threads }) => childOf(children, peer, threads))
    const first = new Map<PeerChild, number>()
    const contextMs = new Map<PeerChild, number>()
    if (phase.kind === 'decode') {
      for (const c of runners) {
        const p = await prepare(c, prompt, phase.tokens)
        first.set(c, p.first)
        contextMs.set(c, p.ms)
      }
    }
    const ms = new Map<PeerChild, number[]>(runners.map((c) => [c, []]))
    const busy = new Map<PeerChild, (number | null)[]>(runners.map((c) => [c, []]))
    const tokens = new Map<PeerChild, readonly number[]>()
    for (let rep = 0; rep < options.reps; rep++) {
      for (const c of rotate(runners, rep)) {
        const r = phase.kind === 'prefill'
          ? await prefill(c, prompt.slice(0, phase.tokens))
          : await decode(c, phase.tokens, first.get(c) ?? 0, phase.steps)
        ms.get(c)?.push(r.ms)
        busy.get(c)?.push(r.otherCpuPct)
        if (!tokens.has(c)) tokens.set(c, r.tokens)
      }
    }
    const peers: Partial<Record<PeerName, PeerPhaseRecord>> = {}
    chosen.forEach(({ peer, threads }, i) => {
      const c = runners[i]
      const probeMs: Record<string, readonly number[]> = {}
      for (const t of threadCounts) probeMs[String(t)] = probe.get(`${probeKey(phase)}|${childOf(children, peer, t).label}`) ?? []
      peers[peer] = { threads, ms: ms.get(c) ?? [], otherCpuPct: busy.get(c) ?? [], probeMs, tokens: tokens.get(c) ?? [], contextPrefillMs: contextMs.get(c) ?? null }
    })
    phases.push({ phase, peers })
    const line = (p: PeerName): string => {
      const r = peers[p]
      return r ? `${p} ${median(r.ms).toFixed(0)} ms (${r.threads}t)` : `${p} —`
    }
    log(`  ${phase.id}: ${PEER_NAMES.map(line).join(', ')}`)
  }
}
