/**
 * @file The heterogeneous engine: the coordinator of a placement that uses more than one device (or any
 * device other than the single-session CPU fast path). Same contract as SingleSessionEngine — forward(tokens,
 * pos) → logits of the last token, truncate, dispose, cacheLength. Embeddings are looked up here, in JS;
 * every graph runs in the worker thread of its device (one per device: all WebGPU work in one thread),
 * values cross through the shared value arena, and each forward is a DAG of (chunk × step) tasks run out
 * of order by the scheduler. Decode runs the placement's decode phase on one token; anything longer runs
 * its prefill phase in chunks of placement.prefillChunkTokens, pipelined across devices. The KV cache
 * stays in the device workers (see device-setup.ts for who holds which layer).
 */
import type { LoadProgressListener } from '../load-progress'
import type { DeviceInfo } from '../../devices'
import { cachedGraphPath, compileSegment, compileShadow, graphTargetOf, modelFingerprint, resolveGraphCacheDir, segmentCacheKey, shadowCacheKey, shadowWeights, VALUE, type CompilableModel, type CompileSink, type GraphOptions, type ShadowSpec } from '../../graph'
import { openOrCompile } from '../session/open-cached-graph'
import { dequantizeRows, type ModelConfig } from '../../model'
import type { Phase, Placement } from '../../plan'
import { DeviceHost } from './device-host'
import { checkForward, chunkLengths, stopIfCancelled, type ForwardEngine } from '../forward'
import { deviceSetupOf, type DeviceSetup, type ShadowLayers } from './device-setup'
import { runSchedule, type ScheduleOrder } from './scheduler'
import type { TaskGraph } from './task-graph'
import { buildForwardDag, HOST_DEVICE, type ForwardTask } from './forward-dag'
import { kvBlockBytes, type KvFormat } from '../kv-snapshot'
import { MAX_USAGE_DEVICES, UsageBoard, type DeviceUsage } from '../usage'
import { ValueArena } from './value-arena'

/** How many distinct forward DAGs (phase × chunk lengths) are kept for reuse. */
const MAX_CACHED_GRAPHS = 16

/** Settings of a heterogeneous engine. */
export interface DeviceWorkersOptions {
  /** positions the caches hold; forward past this throws ContextOverflowError */
  readonly contextLength: number
  /** this machine's devices (the placement's must be among them, ready) */
  readonly devices: readonly DeviceInfo[]
  /** intra-op threads of a CPU-EP device used alone; two CPU-EP devices (cpu, cpu-2) share the cores with 1 each */
  readonly threads?: number
  /** ropeTableLength, int8Activations and w8a8 (for the NPU devices' segments only); the target is chosen per device */
  readonly graph: GraphOptions
  /** compiled-graph cache folder (default: resolveGraphCacheDir's) */
  readonly cacheDir?: string
  /** where busy time is recorded (slot i = `deviceIds[i]`); default a fresh board */
  readonly usage?: UsageBoard
  /** hears what setting up is doing (each segment's compile, hash, session) */
  readonly onProgress?: LoadProgressListener
  /** how chunks are scheduled (default 'out-of-order'; 'in-order' is the baseline benches compare with) */
  readonly order?: ScheduleOrder
  /**
   * With `graph.w8a8` (which applies to the segments on NPU devices): the layers whose matmul groups there get
   * shadow segments, and the hot channels (see device-setup.ts); null or absent: W8A8 without shadows
   */
  readonly shadow?: ShadowLayers | null
}

/** How a heterogeneous engine was set up, in milliseconds. */
export interface DeviceWorkersSetupInfo {
  /** graphs opened (one per distinct device × segment × part) */
  readonly graphs: number
  /** of those, how many came from the on-disk graph cache */
  readonly cacheHits: number
  /** the cache folder */
  readonly cacheDir: string
  /** hashing the model, and compiling and writing the graphs the cache did not have, on the coordinator */
  readonly compileMs: number
  /** the whole setup: workers started, graphs compiled and opened, programs registered */
  readonly setupMs: number
}

/** A shadow graph's spec with the hot channels of its own weights only (what its graph and cache key depend on). */
function stageShadow(model: CompilableModel, spec: ShadowSpec): ShadowSpec {
  const names = shadowWeights(model.config, model.weights, spec.layer, spec.stage).map((w) => w.tensor.name)
  return { ...spec, hot: Object.fromEntries(names.map((n) => [n, spec.hot[n] ?? []])) }
}

/** A placement running on device workers; forward runs one token or a prompt. */
export class DeviceWorkersEngine implements ForwardEngine {
  readonly config: ModelConfig
  /** the placement's prefill chunk (the arena's rows per chunk) */
  readonly prefillChunkTokens: number
  /** devices in use, in usage-board slot order */
  readonly deviceIds: readonly string[]
  private readonly graphs = new Map<string, TaskGraph<ForwardTask>>()
  /** layer → the devices holding its KV cache */
  private readonly kvHolders = new Map<number, string[]>()
  private length = 0
  private running = false
  private disposed = false

  private constructor(
    private readonly model: CompilableModel,
    readonly placement: Placement,
    readonly contextLength: number,
    private readonly setup: DeviceSetup,
    private readonly arena: ValueArena,
    private readonly hosts: ReadonlyMap<string, DeviceHost>,
    private readonly board: UsageBoard,
    readonly setupInfo: DeviceWorkersSetupInfo,
    private readonly order: ScheduleOrder
  ) {
    this.config = model.config
    this.deviceIds = setup.devices
    this.prefillChunkTokens = setup.chunkRows
    for (const [device, layers] of setup.kvLayers) for (const l of layers) this.kvHolders.set(l, [...(this.kvHolders.get(l) ?? []), device])
  }

  /**
   * Starts one worker per device of `placement` (validated by the caller with parsePlacement), compiles
   * each segment and partition part for its device and opens it there. Rejects naming the device and
   * segment when a device cannot take a graph; nothing falls back to the CPU.
   */
  static async create(model: CompilableModel, placement: Placement, options: DeviceWorkersOptions): Promise<DeviceWorkersEngine> {
    const t0 = performance.now()
    let compileMs = 0
    let cacheHits = 0
    const cacheDir = resolveGraphCacheDir(options.cacheDir)
    const c = model.config
    const { contextLength } = options
    if (!Number.isInteger(contextLength) || contextLength < 1 || contextLength > c.contextLength) {
      throw new RangeError(`contextLength ${contextLength} must be in [1, ${c.contextLength}]`)
    }
    const staticShapes = new Set(options.devices.filter((d) => d.contract.staticShapesOnly).map((d) => d.id))
    // W8A8 is what integer NPUs run; every other device keeps its float (or MatMulNBits) matmuls
    const scales = options.graph.w8a8 ?? null
    const w8a8Devices = new Set(scales === null ? [] : options.devices.filter((d) => d.kind === 'npu').map((d) => d.id))
    const shadow = options.shadow === undefined || options.shadow === null ? null : { ...options.shadow, w8a8Devices }
    const setup = deviceSetupOf(placement, c, staticShapes, shadow)
    if (setup.devices.length > MAX_USAGE_DEVICES) throw new RangeError(`a placement may use at most ${MAX_USAGE_DEVICES} devices, this one uses ${setup.devices.length}`)
    const infos = setup.devices.map((id) => {
      const d = options.devices.find((x) => x.id === id)
      if (d === undefined || d.status !== 'ready') throw new Error(`placement device ${id} is ${d === undefined ? 'not on this machine' : d.status}`)
      return d
    })
    const arena = ValueArena.create(setup.slots)
    const board = options.usage ?? new UsageBoard()
    const cpuEps = infos.filter((d) => d.ep === 'cpu').length
    const hosts = new Map<string, DeviceHost>()
    try {
      infos.forEach((d, usageSlot) => {
        // a GPU/NPU EP computes on its device; its session needs no CPU thread pool of its own
        const threads = d.ep !== 'cpu' ? 1 : cpuEps > 1 ? 1 : options.threads
        hosts.set(d.id, DeviceHost.start({ deviceId: d.id, ep: d.ep, threads, providerOptions: d.providerOptions, arena: arena.init, usage: board.buffer, usageSlot, kv: { nKvHeads: c.nKvHeads, headDim: c.headDim, maxLen: contextLength } }))
      })
      const host = (id: string): DeviceHost => {
        const h = hosts.get(id)
        if (!h) throw new Error(`no worker for device ${id}`)
        return h
      }
      // one setup command in flight per device; devices load their graphs in parallel
      const chains = new Map<string, Promise<void>>(infos.map((d) => [d.id, host(d.id).holdLayers(setup.kvLayers.get(d.id) ?? [])]))
      const then = (id: string, step: () => Promise<void>): void => {
        chains.set(id, (chains.get(id) ?? Promise.resolve()).then(step))
      }
      // segments come from the on-disk cache like the single session's graph: a changed placement compiles only what is new
      const th = performance.now()
      const modelHash = modelFingerprint(model)
      compileMs += performance.now() - th
      for (const s of setup.sessions) {
        const ep = infos.find((d) => d.id === s.device)?.ep ?? 'cpu'
        const graph: GraphOptions = { ...options.graph, target: graphTargetOf(ep), staticRows: s.staticRows, w8a8: w8a8Devices.has(s.device) || s.shadow !== null ? scales : null }
        const shadowSpec = s.shadow === null ? null : stageShadow(model, s.shadow)
        const key = shadowSpec === null ? segmentCacheKey(modelHash, s.spec, graph, s.part ?? undefined) : shadowCacheKey(modelHash, shadowSpec, graph)
        const path = cachedGraphPath(cacheDir, key)
        const compile = (sink: CompileSink): Uint8Array => (shadowSpec === null ? compileSegment(model, s.spec, graph, s.part, sink) : compileShadow(model, shadowSpec, graph, sink))
        then(s.device, async () => {
          const opened = await openOrCompile(path, compile, (p) => host(s.device).loadSession(s.key, s.label, p, s.staticRows), { onProgress: options.onProgress })
          compileMs += opened.compileMs
          if (opened.cacheHit) cacheHits++
        })
      }
      for (const p of setup.programs) then(p.device, () => host(p.device).addProgram(p.id, p.program))
      const results = await Promise.allSettled([...chains.values()])
      const failed = results.find((r) => r.status === 'rejected')
      if (failed !== undefined && failed.status === 'rejected') throw failed.reason
    } catch (err) {
      await Promise.all([...hosts.values()].map((h) => h.dispose()))
      throw err
    }
    const setupInfo = { graphs: setup.sessions.length, cacheHits, cacheDir, compileMs, setupMs: performance.now() - t0 }
    return new DeviceWorkersEngine(model, placement, contextLength, setup, arena, hosts, board, setupInfo, options.order ?? 'out-of-order')
  }

  /** Positions currently cached (the next position to run). */
  get cacheLength(): number {
    return this.length
  }

  /** Cumulative busy time per device of this engine's workers. */
  usage(): DeviceUsage {
    return this.board.read(this.deviceIds)
  }

  /** See ForwardEngine.forward: the chunks pipelined across the device workers by the scheduler. */
  async forward(tokens: readonly number[], pos: number, cancelled?: () => boolean): Promise<Float32Array> {
    if (this.disposed) throw new Error('device-workers engine disposed')
    if (this.running) throw new Error('one forward at a time')
    checkForward(tokens, pos, { vocabSize: this.config.vocabSize, cacheLength: this.length, contextLength: this.contextLength })
    this.running = true
    try {
      // the device workers rewind their caches to `pos` when a chunk starts there
      this.length = Math.min(this.length, pos)
      const phase: Phase = tokens.length === 1 ? 'decode' : 'prefill'
      const graph = this.graphFor(phase, tokens.length)
      const emb = this.model.weights.tokenEmbedding
      const hidden = this.arena.slotIndex(VALUE.hidden)
      const dim = this.config.dim
      await runSchedule(graph, async (_, task) => {
        if (task.device === HOST_DEVICE) {
          // a chunk's embedding task starts it: a cancelled forward starts no further chunk
          if (task.chunk > 0) stopIfCancelled(cancelled)
          const out = this.arena.view(hidden, task.parity)
          for (let i = 0; i < task.tokens; i++) dequantizeRows(emb, tokens[task.offset + i], 1, out, i * dim)
          return
        }
        const host = this.hosts.get(task.device)
        if (!host) throw new Error(`no worker for device ${task.device}`)
        try {
          await host.run(task.program, task.parity, task.tokens, pos + task.offset)
        } catch (err) {
          const e = err instanceof Error ? err : new Error(String(err))
          if (!e.message.includes(task.label)) e.message = `${task.label}: ${e.message}`
          throw e
        }
      }, { order: this.order })
      const last = graph.tasks[graph.tasks.length - 1]
      const logits = this.arena.view(this.arena.slotIndex(VALUE.logits), last.parity).slice()
      this.length = pos + tokens.length
      return logits
    } finally {
      this.running = false
    }
  }

  /** Rewinds to `pos` cached positions (the device workers rewind when the next chunk starts there). */
  truncate(pos: number): void {
    if (!Number.isInteger(pos) || pos < 0 || pos > this.length) throw new RangeError(`cannot truncate the KV cache to ${pos}: it holds ${this.length} positions`)
    this.length = pos
  }

  /**
   * See ForwardEngine.readKv: each layer's section from a device that holds its cache (a layer held by two devices —
   * prefill on one, decode on another — has the same rows in both), concatenated in layer order.
   */
  async readKv(start: number, count: number, format: KvFormat): Promise<Uint8Array> {
    this.checkKvIdle()
    if (!Number.isInteger(start) || !Number.isInteger(count) || start < 0 || count < 1 || start + count > this.length) {
      throw new RangeError(`positions ${start}..${start + count} are not all cached (length ${this.length})`)
    }
    const sections: Uint8Array[] = []
    for (let l = 0; l < this.config.nLayers; l++) sections.push(await this.kvHost(l, 0).readKv(l, start, count, format))
    const out = new Uint8Array(sections.reduce((n, s) => n + s.byteLength, 0))
    let at = 0
    for (const s of sections) {
      out.set(s, at)
      at += s.byteLength
    }
    return out
  }

  /** See ForwardEngine.writeKv: each layer's section to every device that holds that layer's cache. */
  async writeKv(start: number, count: number, format: KvFormat, bytes: Uint8Array, reserve = 0): Promise<void> {
    this.checkKvIdle()
    if (!Number.isInteger(start) || start < 0 || start > this.length) throw new RangeError(`cannot write KV positions at ${start}: the cache holds ${this.length}`)
    if (!Number.isInteger(count) || count < 1 || start + count > this.contextLength) throw new RangeError(`cannot write ${count} KV positions at ${start} (context ${this.contextLength})`)
    const c = this.config
    const section = kvBlockBytes({ nLayers: 1, nKvHeads: c.nKvHeads, headDim: c.headDim }, format, count)
    if (bytes.byteLength !== section * c.nLayers) throw new RangeError(`a KV block of ${count} positions needs ${section * c.nLayers} bytes, got ${bytes.byteLength}`)
    // a failed write leaves the caches rewound to `start`
    this.length = Math.min(this.length, start)
    for (let l = 0; l < c.nLayers; l++) {
      const part = bytes.subarray(l * section, (l + 1) * section)
      const holders = this.kvHolders.get(l) ?? []
      for (let i = 0; i < holders.length; i++) await this.kvHost(l, i).writeKv(l, start, count, format, part, reserve)
    }
    this.length = start + count
  }

  private checkKvIdle(): void {
    if (this.disposed) throw new Error('device-workers engine disposed')
    if (this.running) throw new Error('a KV snapshot cannot be taken while a forward runs')
  }

  /** The worker of the `i`-th device holding layer `layer`'s cache. */
  private kvHost(layer: number, i: number): DeviceHost {
    const id = this.kvHolders.get(layer)?.[i]
    const host = id === undefined ? undefined : this.hosts.get(id)
    if (host === undefined) throw new Error(`no device holds layer ${layer}'s KV cache`)
    return host
  }

  /** Ends every device worker (releasing its sessions). */
  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    await Promise.all([...this.hosts.values()].map((h) => h.dispose()))
  }

  /** The forward DAG for `count` tokens in `phase` (decode: one chunk of 1; prefill: chunks of the placement's length). */
  private graphFor(phase: Phase, count: number): TaskGraph<ForwardTask> {
    const lengths = chunkLengths(count, this.prefillChunkTokens)
    const key = `${phase}:${lengths.join(',')}`
    let graph = this.graphs.get(key)
    if (graph === undefined) {
      if (this.graphs.size >= MAX_CACHED_GRAPHS) this.graphs.clear()
      graph = buildForwardDag(this.setup.phases[phase], lengths)
      this.graphs.set(key, graph)
    }
    return graph
  }
}
