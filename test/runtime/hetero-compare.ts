/**
 * @file Runs a placement on the heterogeneous engine side by side with the reference forward: one prefill
 * of the prompt (chunked and pipelined by the engine), then greedy decode steps on the engine's own
 * argmax, comparing the logits at every step.
 */
import type { DeviceInfo } from '../../main/engine/devices'
import { int8ActivationBlock, int8RoundingOf, type CompilableModel, type GraphOptions } from '../../main/engine/graph'
import { createReferenceState, referenceForward, type ReferenceOptions } from '../../main/engine/model/reference'
import { tensorToFloat32, w8a8Linear, type Tensor, type W8A8Linear } from '../../main/engine/model'
import type { Placement } from '../../main/engine/plan'
import { DeviceWorkersEngine } from '../../main/engine/runtime/hetero/device-workers-engine'
import type { ShadowLayers } from '../../main/engine/runtime/hetero/device-setup'
import type { DeviceUsage } from '../../main/engine/runtime/usage'
import { argmax } from '../graph/compare'
import { tempDir } from '../helpers/paths'

/** What one comparison saw. */
export interface HeteroComparison {
  /** max |engine − reference| over all compared logits */
  readonly maxAbsDiff: number
  /** max |reference logit| */
  readonly logitScale: number
  /** the engine's greedy ids: after the prefill, then after each decode step */
  readonly ids: readonly number[]
  /** the reference's argmax agreed with the engine's at every step */
  readonly top1Equal: boolean
  /** quantized matmuls that round their inputs to int8 (0: float arithmetic throughout) */
  readonly int8Matmuls: number
  /** max |engine − the `contrast` reference| (0 without one) */
  readonly contrastDiff: number
  readonly usage: DeviceUsage
  readonly setupMs: number
  readonly runMs: number
}

/** Options of compareHetero. */
export interface HeteroCompareOptions {
  readonly int8Activations?: boolean
  /** the reference rounds matmul inputs to int8 where the CPU graph does (default: when the graph does) */
  readonly emulateInt8?: boolean
  /** compile the layer matmuls as W8A8 at these activation scales (GraphOptions.w8a8) */
  readonly w8a8?: Readonly<Record<string, number>>
  /** the reference's options instead of the int8 emulation (e.g. w8a8Reference) */
  readonly reference?: ReferenceOptions
  /** a second reference the engine is measured against too (contrastDiff), e.g. W8A8 without its shadow */
  readonly contrast?: ReferenceOptions
  /** hears which phase the references compute next (e.g. prefillW8A8Reference's switch) */
  readonly onPhase?: (phase: 'prefill' | 'decode') => void
  /** shadow segments for W8A8 layers (DeviceWorkersOptions.shadow) */
  readonly shadow?: ShadowLayers
}

/** Prefills `prompt`, then decodes `decodeSteps` greedy tokens on `placement`, comparing with the reference. */
export async function compareHetero(
  model: CompilableModel,
  placement: Placement,
  devices: readonly DeviceInfo[],
  prompt: readonly number[],
  decodeSteps: number,
  options: HeteroCompareOptions = {}
): Promise<HeteroComparison> {
  const contextLength = Math.min(model.config.contextLength, prompt.length + decodeSteps + 1)
  const graph: GraphOptions = { ropeTableLength: contextLength, int8Activations: options.int8Activations ?? true, w8a8: options.w8a8 ?? null }
  const emulate = options.emulateInt8 ?? graph.int8Activations
  const state = createReferenceState(model.config, contextLength, options.reference ?? (emulate ? { int8Activations: (t) => int8RoundingOf(t, graph) } : {}))
  const w = model.weights
  const int8Matmuls = [w.output, ...w.layers.flatMap((l) => [l.wq, l.wk, l.wv, l.wo, l.wGate, l.wUp, l.wDown])].filter((t) => int8ActivationBlock(t, graph) !== null).length
  const t0 = performance.now()
  const cache = tempDir()
  const engine = await DeviceWorkersEngine.create(model, placement, { contextLength, devices, threads: 1, graph, cacheDir: cache.dir, shadow: options.shadow ?? null }).catch((err: unknown) => {
    cache.dispose()
    throw err
  })
  const t1 = performance.now()
  const contrast = options.contrast === undefined ? null : createReferenceState(model.config, contextLength, options.contrast)
  let contrastDiff = 0
  let maxAbsDiff = 0
  let logitScale = 0
  let top1Equal = true
  const ids: number[] = []
  const check = (got: Float32Array, want: Float32Array, other: Float32Array | null): number => {
    if (other !== null) for (let i = 0; i < other.length; i++) contrastDiff = Math.max(contrastDiff, Math.abs(got[i] - other[i]))
    for (let i = 0; i < want.length; i++) {
      maxAbsDiff = Math.max(maxAbsDiff, Math.abs(got[i] - want[i]))
      logitScale = Math.max(logitScale, Math.abs(want[i]))
    }
    const id = argmax(got)
    if (id !== argmax(want)) top1Equal = false
    ids.push(id)
    return id
  }
  try {
    let want = new Float32Array(0)
    let other: Float32Array | null = null
    options.onPhase?.('prefill')
    for (let p = 0; p < prompt.length; p++) {
      want = referenceForward(model, state, prompt[p], p).slice()
      if (contrast !== null) other = referenceForward(model, contrast, prompt[p], p).slice()
    }
    let next = check(await engine.forward(prompt, 0), want, other)
    options.onPhase?.('decode')
    for (let s = 0; s < decodeSteps; s++) {
      const pos = prompt.length + s
      want = referenceForward(model, state, next, pos).slice()
      other = contrast === null ? null : referenceForward(model, contrast, next, pos).slice()
      next = check(await engine.forward([next], pos), want, other)
    }
    return { maxAbsDiff, logitScale, ids, top1Equal, int8Matmuls, contrastDiff, usage: engine.usage(), setupMs: t1 - t0, runMs: performance.now() - t1 }
  } finally {
    await engine.dispose()
    cache.dispose()
  }
}

/** True when any group of either phase, or any partition, runs on a device whose EP is not the CPU's. */
export function usesGpu(placement: Placement, devices: readonly DeviceInfo[]): boolean {
  const ep = (id: string): string => devices.find((d) => d.id === id)?.ep ?? 'cpu'
  return Object.values(placement.phases).some(
    (p) => ep(p.device) !== 'cpu' || p.groups.some((g) => ep(g.device) !== 'cpu') || p.partitions.some((x) => x.devices.some((d) => ep(d) !== 'cpu'))
  )
}

/**
 * Reference options for a placement whose NPU runs the prefill: `linears` (W8A8) while `prefill` is set, the plain
 * float product otherwise (decode runs on a float device). The float path is the reference's own matmul.
 */
export function prefillW8A8Reference(linears: ReadonlyMap<Tensor, W8A8Linear>): { readonly options: ReferenceOptions; prefill: boolean } {
  const floats = new WeakMap<Tensor, Float32Array>()
  const mode = {
    prefill: true,
    options: {
      linearOverride: (t: Tensor) => {
        const lin = linears.get(t)
        if (lin === undefined) return null
        return (out: Float32Array, x: Float32Array): void => {
          if (mode.prefill) {
            w8a8Linear(out, x, lin)
            return
          }
          let w = floats.get(t)
          if (w === undefined) floats.set(t, (w = tensorToFloat32(t)))
          const n = x.length
          for (let i = 0; i < out.length; i++) {
            let sum = 0
            for (let j = 0; j < n; j++) sum += w[i * n + j] * x[j]
            out[i] = sum
          }
        }
      }
    }
  }
  return mode
}
