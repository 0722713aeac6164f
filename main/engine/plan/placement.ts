/**
 * @file A Placement: which device runs each op group in each phase (prefill, decode), which matmul groups
 * are partitioned between two devices, and the prefill chunk length. It is plain, versioned JSON — stored in
 * settings, shown and edited in the UI, produced by presets and the solver — so it is compact: per phase a
 * default device, then overrides (later entries win), then partitions (which win over overrides).
 *
 *   { "version": 1, "name": "Layer split", "prefillChunkTokens": 256,
 *     "phases": {
 *       "prefill": { "device": "cpu", "groups": [{ "layer": "all", "group": "qkv", "device": "webgpu-0" }],
 *                    "partitions": [{ "layer": 3, "group": "ffn", "by": "rows", "devices": ["webgpu-0", "cpu"], "ratio": 0.6 }] },
 *       "decode": { "device": "cpu", "groups": [], "partitions": [] } } }
 *
 * `parsePlacement` (validate.ts) is the only way from untrusted JSON to a Placement that runs;
 * `parsePlacementShape` (shape.ts) is its model-free first half, for callers that have no model yet.
 */
import { LAYER_GROUP_KINDS, modelOpGroups, type GroupKind, type OpGroup } from '../graph'
import type { ModelConfig } from '../model'
import { CPU_DEVICE_ID } from '../devices'

/** The Placement format version this build reads and writes. */
export const PLACEMENT_VERSION = 1

/** Longest placement name (characters). */
export const MAX_PLACEMENT_NAME_LENGTH = 120
/** Most overrides / partitions per phase: one per group of a 1024-layer model is far beyond any real one. */
export const MAX_PHASE_ENTRIES = 10_000
/** Longest prefill chunk (tokens); llm.npu uses 256, static NPU graphs grow with it. */
export const MAX_PREFILL_CHUNK_TOKENS = 8192
/**
 * Default prefill chunk (tokens), capped by the model's context length. llm.npu uses 256 for static NPU graphs;
 * on the CPU the single session prefills fastest at 128 (110M F32, 2 threads: 925 tok/s at 128 vs 824 at 256 and
 * 727 at 512 for a 1,024-token prompt; even at 512 tokens), because attention's scores grow with the chunk.
 * Quantized weights agree (110M Q8_0, Q4_0, Q4_K_M, 512-token prompt, 1 and 2 threads, interleaved on a loaded
 * host, CPU time per token relative to 128): 64 and 256 at 0.84–1.06×, 512 at 0.6–0.9× — MatMulNBits' int8 kernel
 * loses efficiency above M ≈ 128. Peak RSS grows with the chunk through ORT's activation arena (110M Q8_0:
 * 574 / 613 / 662 / 824 MB at 64 / 128 / 256 / 512). An NPU placement sets its own chunk (below).
 */
export const DEFAULT_PREFILL_CHUNK_TOKENS = 128

/**
 * The prefill chunk when a static-shape device (an NPU) runs part of prefill: its graphs are compiled for
 * exactly this many tokens (the last chunk padded), so one graph serves every chunk. llm.npu's 256 by default;
 * below 32 a chunk no longer amortizes an NPU's launch cost, above 1,024 its static activations outgrow the
 * memory NPU compilers plan for.
 */
export const STATIC_CHUNK_TOKENS = Object.freeze({ default: 256, min: 32, max: 1024 })

/** An op group's name, as the graph compiler calls it (`GroupKind`). */
export type OpGroupName = GroupKind

/** The two phases of generation: the prompt in chunks, then one token per step. */
export type Phase = 'prefill' | 'decode'

/** Both phases, in order. */
export const PHASES: readonly Phase[] = ['prefill', 'decode']

/** Op groups whose time is a weight matmul, the only ones that can be partitioned between devices. */
export const MATMUL_GROUPS = ['qkv', 'attn-out', 'ffn', 'lm-head'] as const

/** One of MATMUL_GROUPS. */
export type MatmulGroup = (typeof MATMUL_GROUPS)[number]

/** The groups after the last layer (their `layer` is 'final'). */
export const FINAL_GROUPS: readonly GroupKind[] = ['final-norm', 'lm-head']

/** Every op group name, per-layer ones first. */
export const OP_GROUP_NAMES: readonly GroupKind[] = [...LAYER_GROUP_KINDS, ...FINAL_GROUPS]

/** Which instance(s) of a group an entry means: one layer, every layer ('all'), or the final groups ('final'). */
export type LayerRef = number | 'all' | 'final'

/** Puts one group (in one layer, or every layer) on a device, overriding the phase's default. */
export interface GroupOverride {
  readonly layer: LayerRef
  readonly group: OpGroupName
  readonly device: string
}

/** A matmul split by weight rows: `ratio` of the output rows on devices[0], the rest on devices[1]. */
export interface RowPartition {
  readonly layer: LayerRef
  readonly group: MatmulGroup
  readonly by: 'rows'
  readonly devices: readonly [string, string]
  /** share of the rows on devices[0], in (0, 1) */
  readonly ratio: number
}

/**
 * A matmul split by sequence (prefill only): the first `standardLength` tokens of each chunk on
 * devices[0] (a fixed shape, what a static NPU graph wants), the remainder on devices[1].
 */
export interface SequencePartition {
  readonly layer: LayerRef
  readonly group: MatmulGroup
  readonly by: 'sequence'
  readonly devices: readonly [string, string]
  /** tokens per chunk on devices[0], in [1, prefillChunkTokens − 1] */
  readonly standardLength: number
}

/** A matmul group split between two devices; devices[0] is where the two halves are joined. */
export type Partition = RowPartition | SequencePartition

/** One phase: a default device, overrides applied in order (later wins), then partitions. */
export interface PhasePlacement {
  readonly device: string
  readonly groups: readonly GroupOverride[]
  readonly partitions: readonly Partition[]
  /**
   * Where the shadow segments of W8A8 layers run (llm.npu's shadow outlier execution: the float product of what
   * int8 clipping removed), when the model runs W8A8 with shadows: a CPU device, because a shadow gathers the
   * channels that clipped in each run (a data-dependent shape, which GPU and NPU providers refuse or hand back to
   * the CPU); absent: the CPU.
   */
  readonly shadow?: string
}

/** Where everything runs (plain JSON, version 1). */
export interface Placement {
  readonly version: typeof PLACEMENT_VERSION
  readonly name: string
  /** prompt tokens per prefill run; a static-shape device's graphs are compiled for exactly this length */
  readonly prefillChunkTokens: number
  readonly phases: { readonly prefill: PhasePlacement; readonly decode: PhasePlacement }
}

/** A placement that is not valid for this model and these devices; `path` names the offending field. */
export class PlacementError extends Error {
  constructor(
    readonly path: string,
    readonly detail: string
  ) {
    super(`placement ${path === '' ? '' : `${path}: `}${detail}`)
    this.name = 'PlacementError'
  }
}

/** True when a matmul group name. */
export function isMatmulGroup(kind: GroupKind): kind is MatmulGroup {
  return MATMUL_GROUPS.some((g) => g === kind)
}

/** True when `ref` names the layer of `group` (layer null = the final groups). */
export function layerMatches(ref: LayerRef, group: OpGroup): boolean {
  if (ref === 'final') return group.layer === null
  if (ref === 'all') return group.layer !== null
  return group.layer === ref
}

/** One op group of a phase with the device it runs on, or the partition that splits it. */
export interface GroupAssignment {
  readonly group: OpGroup
  /** the device running the group; for a partition, devices[0] (where the halves are joined) */
  readonly device: string
  readonly partition: Partition | null
}

/** Per config: the model's op groups (built once; the solver assigns them thousands of times). */
const GROUPS_MEMO = new WeakMap<ModelConfig, readonly OpGroup[]>()

/** The model's op groups in execution order, the same objects on every call for the same config. */
export function opGroupsOf(config: ModelConfig): readonly OpGroup[] {
  let groups = GROUPS_MEMO.get(config)
  if (groups === undefined) GROUPS_MEMO.set(config, (groups = Object.freeze(modelOpGroups(config))))
  return groups
}

/** Every op group of the model in execution order, with its device or partition in `phase`. */
export function assignGroups(phase: PhasePlacement, config: ModelConfig): GroupAssignment[] {
  return opGroupsOf(config).map((group) => {
    let device = phase.device
    for (const o of phase.groups) if (o.group === group.kind && layerMatches(o.layer, group)) device = o.device
    let partition: Partition | null = null
    for (const p of phase.partitions) if (p.group === group.kind && layerMatches(p.layer, group)) partition = p
    return { group, device: partition?.devices[0] ?? device, partition }
  })
}

/** The device a phase's shadow segments run on: its `shadow`, else the CPU. */
export function shadowDeviceOf(phase: PhasePlacement): string {
  return phase.shadow ?? CPU_DEVICE_ID
}

/** Every device id a phase uses (default, overrides and partitions that actually apply), in first-use order. */
export function phaseDevices(phase: PhasePlacement, config: ModelConfig): string[] {
  const ids = new Set<string>()
  for (const a of assignGroups(phase, config)) {
    ids.add(a.device)
    if (a.partition !== null) ids.add(a.partition.devices[1])
  }
  return [...ids]
}

/** The longest prefill chunk a model takes: MAX_PREFILL_CHUNK_TOKENS, capped by its context length. */
export function maxPrefillChunkTokens(config: ModelConfig): number {
  return Math.max(1, Math.min(MAX_PREFILL_CHUNK_TOKENS, config.contextLength))
}

/** The chunk range for a placement that puts prefill work on a static-shape device, capped by the context length. */
export function staticChunkRange(config: ModelConfig): { readonly min: number; readonly max: number; readonly defaultTokens: number } {
  const cap = maxPrefillChunkTokens(config)
  return { min: Math.min(STATIC_CHUNK_TOKENS.min, cap), max: Math.min(STATIC_CHUNK_TOKENS.max, cap), defaultTokens: Math.min(STATIC_CHUNK_TOKENS.default, cap) }
}

/** The prefill chunk to use when none is given: the default, capped by the context length. */
export function defaultPrefillChunkTokens(config: ModelConfig): number {
  return Math.min(DEFAULT_PREFILL_CHUNK_TOKENS, maxPrefillChunkTokens(config))
}
