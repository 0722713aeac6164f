/**
 * @file Which op groups a device can take, from its probed contract: the planner's rules, shared by the
 * validator, the presets and the solver so none of them can place a group where it cannot run.
 *
 * Rules (each refusal says which one):
 * - only 'ready' devices are used (failed, unavailable and unprobed ones never are);
 * - an int8-only device (e.g. the QNN HTP) takes only matmul groups, as in llm.npu and HeteroInfer, where
 *   the NPU runs the linear layers and norms/RoPE/attention stay on the CPU or GPU;
 * - a static-shapes-only device does not take attention: its cache length grows every step;
 * - each group needs the contrib ops its emitter uses (norms: (Skip)SimplifiedLayerNormalization — the
 *   fused form appears whenever a residual sum from the same graph feeds the norm; rope: RotaryEmbedding;
 *   matmuls of a quantized model: MatMulNBits);
 * - the group's largest weight tensor (as compiled; only a part's rows for a partition) must fit the
 *   device's maxTensorBytes (WebGPU: one 128 MiB binding).
 */
import type { ContribOp, DeviceInfo } from '../devices'
import type { GroupKind } from '../graph'
import type { ModelConfig, ModelWeights, Tensor } from '../model'
import { isMatmulGroup } from './placement'

/** How the compiler will store the matmul weights: what the contract checks need to know about them. */
export interface WeightInfo {
  /** true when the matmuls compile to MatMulNBits (quantized blocks kept as blocks) */
  readonly quantized: boolean
  /** stored bits per weight element in the compiled graph, scales included (f32 = 32, Q4_0 = 4.5) */
  readonly bitsPerWeight: number
}

/** Float weights: the compiler widens f16/bf16 to float32 initializers. */
export const FLOAT32_WEIGHTS: WeightInfo = Object.freeze({ quantized: false, bitsPerWeight: 32 })

/** Bits per element of each ggml block type (block bytes × 8 / block elements). */
const GGML_BITS: Readonly<Record<string, number>> = Object.freeze({ q8_0: 8.5, q4_0: 4.5, q4_k: 4.5, q6_k: 6.5625 })

/** Compiled bits per element of one weight tensor, and whether it stays quantized (see graph/linear.ts). */
function tensorBits(t: Tensor): { quantized: boolean; bits: number } {
  const d = t.data
  if (d.kind === 'ggml') return { quantized: true, bits: GGML_BITS[d.dtype] ?? 32 }
  if (d.kind === 'int8-groups') {
    const k = t.shape[1] ?? 0
    // MatMulNBits takes power-of-two groups ≥ 16 that tile the row; others become float32 MatMuls
    const fits = d.groupSize >= 16 && (d.groupSize & (d.groupSize - 1)) === 0 && k % d.groupSize === 0
    return fits ? { quantized: true, bits: 8 + 32 / d.groupSize } : { quantized: false, bits: 32 }
  }
  return { quantized: false, bits: 32 }
}

/** The WeightInfo of a loaded model: quantized if any matmul weight is, at the widest encoding's bits. */
export function weightInfoOf(weights: ModelWeights): WeightInfo {
  const tensors: Tensor[] = [weights.output]
  for (const l of weights.layers) tensors.push(l.wq, l.wk, l.wv, l.wo, l.wGate, l.wUp, l.wDown)
  let quantized = false
  let bits = 0
  for (const t of tensors) {
    const b = tensorBits(t)
    quantized ||= b.quantized
    bits = Math.max(bits, b.bits)
  }
  return { quantized, bitsPerWeight: bits }
}

/**
 * The WeightInfo from the tensor encodings a header-only load lists (`LoadedModel.tensorTypes`), for callers
 * that do not hold the weights. Block-quantized: quantized at the widest block encoding present. llama2.c
 * int8 groups: quantized, counted at 32 bits because the group size is not in the list (so a size check errs
 * on the safe side). Anything else compiles to float32. `weightInfoOf` is exact when the weights are loaded.
 */
export function weightInfoOfTypes(tensorTypes: readonly string[]): WeightInfo {
  if (tensorTypes.includes('int8-groups')) return { quantized: true, bitsPerWeight: 32 }
  const blocks = tensorTypes.flatMap((t) => (Object.hasOwn(GGML_BITS, t) ? [GGML_BITS[t]] : []))
  if (blocks.length > 0) return { quantized: true, bitsPerWeight: Math.max(...blocks) }
  return FLOAT32_WEIGHTS
}

/** Contrib ops a group's emitter uses (matmuls only need MatMulNBits when weights are quantized). */
export function requiredContribOps(kind: GroupKind, weights: WeightInfo): ContribOp[] {
  switch (kind) {
    case 'attn-norm':
    case 'ffn-norm':
    case 'final-norm':
      return ['SimplifiedLayerNormalization', 'SkipSimplifiedLayerNormalization']
    case 'rope':
      return ['RotaryEmbedding']
    case 'attention':
      return []
    default:
      return weights.quantized ? ['MatMulNBits'] : []
  }
}

/**
 * Elements of the group's largest weight tensor as the compiler emits it: Q/K/V and gate/up are fused
 * into one matrix each (graph/linear.ts), norms hold one [dim] vector. `rowShare` scales matmul rows.
 */
export function largestWeightElements(kind: GroupKind, config: ModelConfig, rowShare = 1): number {
  const { dim, hiddenDim, nHeads, nKvHeads, headDim, vocabSize } = config
  switch (kind) {
    case 'qkv':
      return Math.ceil((nHeads + 2 * nKvHeads) * headDim * rowShare) * dim
    case 'attn-out':
      return Math.ceil(dim * rowShare) * nHeads * headDim
    case 'ffn':
      return Math.ceil(2 * hiddenDim * rowShare) * dim
    case 'lm-head':
      return Math.ceil(vocabSize * rowShare) * dim
    default:
      return dim
  }
}

/** Why the device cannot be used at all, or null when it is ready. */
export function deviceRefusal(device: DeviceInfo): string | null {
  if (device.status === 'ready') return null
  return `device ${JSON.stringify(device.id)} is ${device.status}${device.reason !== null ? ` (${device.reason})` : ''}, not ready`
}

/**
 * Why `device` cannot run op group `kind` (a `rowShare` of its rows, for one part of a row partition),
 * or null when it can.
 */
export function groupRefusal(device: DeviceInfo, kind: GroupKind, config: ModelConfig, weights: WeightInfo, rowShare = 1): string | null {
  const id = JSON.stringify(device.id)
  const unusable = deviceRefusal(device)
  if (unusable !== null) return unusable
  const c = device.contract
  if (c.int8Only && !isMatmulGroup(kind)) return `device ${id} runs only int8 (QDQ) graphs, so it takes only the matmul groups (qkv, attn-out, ffn, lm-head), not ${kind}`
  if (c.staticShapesOnly && kind === 'attention') return `device ${id} needs static shapes, and attention reads a cache that grows every step`
  const missing = requiredContribOps(kind, weights).filter((op) => !c.supportsContribOps.includes(op))
  if (missing.length > 0) return `device ${id} does not support ${missing.join(', ')}, which ${kind} needs`
  if (c.maxTensorBytes !== null) {
    const bytes = Math.ceil((largestWeightElements(kind, config, rowShare) * weights.bitsPerWeight) / 8)
    if (bytes > c.maxTensorBytes) {
      const mib = (n: number): string => `${(n / 2 ** 20).toFixed(1)} MiB`
      return `${kind}'s largest weight (${mib(bytes)}${rowShare < 1 ? ` for this part` : ''}) exceeds device ${id}'s tensor limit of ${mib(c.maxTensorBytes)}`
    }
  }
  return null
}
