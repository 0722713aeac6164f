import { describe, expect, it } from 'vitest'
import { createSession, float32Tensor, tensorFloat32Data, type OrtTensor } from '../../main/engine/devices'
import { compileSegment, describeValue, int8ActivationBlock, kvOutputValues, KV_OUTPUT, modelOpGroups, segmentSpec, type GraphOptions } from '../../main/engine/graph'
import { placementToSegments, type MatmulGroup, type PartitionSegment, type PhasePlacement, type Placement, type RowSlice } from '../../main/engine/plan'
import { sliceNBitsCols, sliceNBitsRows, unpackNBits, type NBitsWeight } from '../../main/engine/graph/quant-pack'
import { Rng } from '../fixtures/rng'
import { randomModel, type RandomModel, type RandomModelSpec } from './random-model'

/** Tokens per run. */
const S = 3
const OPTIONS: GraphOptions = { ropeTableLength: 16 }
const GROUPS: readonly MatmulGroup[] = ['qkv', 'attn-out', 'ffn', 'lm-head']
const RATIOS = [0.5, 0.3, 0.77]
/**
 * Joined parts vs the unsplit graph, relative to the largest |value|. Float32 weights: the same products,
 * summed in another order (ffn's partial sums) — rounding only. Int8 activations: a row part rounds the
 * same full-width input as the unsplit matmul; a column part (ffn's w_down) starts and ends on the
 * weight's blocks, so each of its input blocks is one the unsplit matmul rounds, from the same values,
 * with the same scale max|x|/127 — the parts compute exactly the unsplit products (asserted below).
 */
const JOIN_TOLERANCE = 1e-5

const SMALL = { dim: 64, hiddenDim: 128, nHeads: 4, nKvHeads: 2, vocabSize: 97, nLayers: 2 }
const KQUANT = { dim: 256, hiddenDim: 512, nHeads: 4, nKvHeads: 2, vocabSize: 97, nLayers: 2 }
const MODELS: ReadonlyArray<[string, RandomModelSpec]> = [
  ['f32, GQA with qkv bias', { seed: 41, ...SMALL, qkvBias: true }],
  ['q8_0, tied embeddings', { seed: 42, ...SMALL, encoding: 'q8_0', tiedEmbeddings: true }],
  ['q4_0', { seed: 43, ...SMALL, encoding: 'q4_0', qkvBias: true }],
  ['int8-groups', { seed: 44, ...SMALL, encoding: 'int8-groups' }],
  ['q4_k', { seed: 45, ...KQUANT, encoding: 'q4_k' }],
  ['q6_k', { seed: 46, ...KQUANT, encoding: 'q6_k' }]
]

/** The row partition of `group` (layer 1, or the final lm head) at `ratio`, exactly as the planner builds it. */
function rowPartition(model: RandomModel, group: MatmulGroup, ratio: number): PartitionSegment {
  const phase: PhasePlacement = {
    device: 'cpu',
    groups: [],
    partitions: [{ layer: group === 'lm-head' ? 'final' : 1, group, by: 'rows', devices: ['cpu', 'cpu-2'], ratio }]
  }
  const placement: Placement = { version: 1, name: 'test', prefillChunkTokens: 8, phases: { prefill: phase, decode: phase } }
  const seg = placementToSegments(placement, 'decode', model.config).find((s): s is PartitionSegment => s.kind === 'partition')
  if (!seg) throw new Error('no partition segment')
  return seg
}

function rowSlice(seg: PartitionSegment, i: 0 | 1): RowSlice {
  const slice = seg.parts[i].slice
  if (slice.by !== 'rows') throw new Error('expected a row part')
  return slice
}

/** Seeded N(0, 1) activations for the graph inputs. */
function feedsFor(model: RandomModel, names: readonly string[], seed: number): Record<string, OrtTensor> {
  const rng = new Rng(seed)
  const feeds: Record<string, OrtTensor> = {}
  for (const name of names) {
    const dims = describeValue(model.config, name).dims.map((d) => (d === 'seq' ? S : d))
    if (dims.some((d) => typeof d !== 'number')) throw new Error(`${name}: unexpected dynamic dims`)
    const shape = dims.map(Number)
    feeds[name] = float32Tensor(rng.fillNormal(new Float32Array(shape.reduce((a, d) => a * d, 1)), 1), shape)
  }
  return feeds
}

async function runCpu(bytes: Uint8Array, feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>> {
  const session = await createSession(bytes, { ep: 'cpu', intraOpThreads: 1, interOpThreads: 1 })
  try {
    return await session.run(feeds)
  } finally {
    await session.release()
  }
}

/** Rows × width of a value as the unsplit graph returns it (a new K/V value is one slab of KV_OUTPUT). */
function unsplitValue(seg: PartitionSegment, out: Record<string, OrtTensor>, name: string): Float32Array {
  const kv = kvOutputValues(seg.spec)
  const i = kv.indexOf(name)
  if (i < 0) return tensorFloat32Data(out[name], name)
  const packed = tensorFloat32Data(out[KV_OUTPUT], KV_OUTPUT)
  const slab = packed.length / kv.length
  return packed.subarray(i * slab, (i + 1) * slab)
}

/** The two parts' outputs joined as the plan says: concatenated at their feature ranges, or summed. */
function joined(seg: PartitionSegment, outs: readonly Record<string, OrtTensor>[], name: string, rows: number, width: number): Float32Array {
  const join = seg.joins.find((j) => j.value === name)
  if (!join) throw new Error(`no join for ${name}`)
  const parts = [0, 1].map((i) => tensorFloat32Data(outs[i][name], `${name} of part ${i}`))
  const out = new Float32Array(rows * width)
  if (join.op === 'sum') {
    for (let i = 0; i < out.length; i++) out[i] = parts[0][i] + parts[1][i]
    return out
  }
  ;([0, 1] as const).forEach((p) => {
    const range = rowSlice(seg, p).outputs.find((o) => o.value === name)
    if (!range) throw new Error(`part ${p} has no ${name}`)
    const w = range.end - range.start
    for (let r = 0; r < rows; r++) out.set(parts[p].subarray(r * w, (r + 1) * w), r * width + range.start)
  })
  return out
}

function relativeDiff(got: Float32Array, want: Float32Array): number {
  let d = 0
  let scale = 1
  for (let i = 0; i < want.length; i++) {
    d = Math.max(d, Math.abs(got[i] - want[i]))
    scale = Math.max(scale, Math.abs(want[i]))
  }
  return d / scale
}

describe('row-partition parts join to the unsplit group (CPU EP)', () => {
  for (const [label, spec] of MODELS) {
    const model = randomModel(spec)
    for (const group of GROUPS) {
      it(`${label}: ${group}`, async () => {
        for (const ratio of RATIOS) {
          const seg = rowPartition(model, group, ratio)
          const parts = [rowSlice(seg, 0), rowSlice(seg, 1)]
          const wDown = model.weights.layers[1].wDown
          const block = int8ActivationBlock(wDown, OPTIONS)
          if (group === 'ffn' && block !== null) {
            // the precondition for exact int8 partial sums: the hidden cut falls on w_down's input blocks
            for (const p of parts) for (const w of p.weights) expect(w.start % block === 0 && w.end % block === 0).toBe(true)
          }
          const feeds = feedsFor(model, seg.spec.inputs, spec.seed + ratio * 100)
          const whole = await runCpu(compileSegment(model, seg.spec, OPTIONS), feeds)
          const outs = await Promise.all(parts.map((p) => runCpu(compileSegment(model, seg.spec, OPTIONS, p), feeds)))
          for (const p of [0, 1] as const) {
            for (const o of parts[p].outputs) {
              // each value under its own name, as wide as its range
              const got = outs[p][o.value]
              expect(got.dims.at(-1), `${o.value} of part ${p}`).toBe(o.end - o.start)
            }
          }
          for (const name of seg.spec.outputs) {
            const want = unsplitValue(seg, whole, name)
            const width = describeValue(model.config, name).dims.at(-1)
            if (typeof width !== 'number') throw new Error('width')
            expect(relativeDiff(joined(seg, outs, name, want.length / width, width), want), `${name} at ratio ${ratio}`).toBeLessThan(JOIN_TOLERANCE)
          }
        }
      })
    }
  }
})

describe('compileSegment part checks', () => {
  const model = randomModel({ seed: 47, ...SMALL, encoding: 'q8_0' })
  const all = modelOpGroups(model.config)
  const ffnSpec = segmentSpec(model.config, all.filter((g) => g.layer === 0 && g.kind === 'ffn'), all)
  const ffnPart = (start: number, end: number, residual: RowSlice['residual'] = 'whole'): RowSlice => ({
    by: 'rows',
    weights: [
      { weight: 'wGate', axis: 0, start, end },
      { weight: 'wUp', axis: 0, start, end },
      { weight: 'wDown', axis: 1, start, end }
    ],
    outputs: [{ value: 'resid_0', start: 0, end: model.config.dim }],
    residual
  })

  it('accepts a block-aligned hidden range and refuses one that cuts a quantization block', () => {
    expect(compileSegment(model, ffnSpec, OPTIONS, ffnPart(32, 128, 'none')).length).toBeGreaterThan(0)
    expect(() => compileSegment(model, ffnSpec, OPTIONS, ffnPart(0, 40))).toThrow(/columns \[0, 40\) cut its 32-wide quantization blocks/)
  })

  it('refuses inconsistent parts and multi-group specs', () => {
    const wrongOutputs: RowSlice = { ...ffnPart(0, 64), outputs: [{ value: 'resid_0', start: 0, end: 32 }] }
    expect(() => compileSegment(model, ffnSpec, OPTIONS, wrongOutputs)).toThrow(/outputs must be resid_0 \[0, 64\)/)
    const missing: RowSlice = { ...ffnPart(0, 64), weights: ffnPart(0, 64).weights.slice(0, 2) }
    expect(() => compileSegment(model, ffnSpec, OPTIONS, missing)).toThrow(/weights \(weight\/axis\) must be/)
    expect(() => compileSegment(model, ffnSpec, OPTIONS, { ...ffnPart(0, 64), residual: 'slice' })).toThrow(/residual 'slice'/)
    const two = segmentSpec(model.config, all.filter((g) => g.layer === 0 && (g.kind === 'ffn-norm' || g.kind === 'ffn')), all)
    expect(() => compileSegment(model, two, OPTIONS, ffnPart(0, 64))).toThrow(/exactly one matmul group/)
    const norm = segmentSpec(model.config, all.filter((g) => g.layer === 0 && g.kind === 'attn-norm'), all)
    expect(() => compileSegment(model, norm, OPTIONS, ffnPart(0, 64))).toThrow(/only matmul groups/)
  })
})

describe('sliced MatMulNBits weights', () => {
  /** A random packed weight, with zero points and Q4_K-style mins so every array is exercised. */
  function packed(bits: 4 | 8, blockSize: number, n: number, k: number, seed: number): NBitsWeight {
    const rng = new Rng(seed)
    const nb = k / blockSize
    const bytes = (count: number): Uint8Array => Uint8Array.from({ length: count }, () => rng.int(256))
    return {
      n,
      k,
      bits,
      blockSize,
      codes: bytes((n * k * bits) / 8),
      scales: rng.fillNormal(new Float32Array(n * nb), 1),
      zeroPoints: bytes(n * Math.ceil((nb * bits) / 8)),
      minsT: rng.fillNormal(new Float32Array(nb * n), 1)
    }
  }

  /** Rows [r0, r1) × columns [c0, c1) of a row-major [n, k] matrix. */
  function sub(m: Float32Array, k: number, r0: number, r1: number, c0: number, c1: number): number[] {
    const out: number[] = []
    for (let r = r0; r < r1; r++) out.push(...m.subarray(r * k + c0, r * k + c1))
    return out
  }

  it('row and block-aligned column slices dequantize to the same sub-matrix (4-bit zero points repacked)', () => {
    for (const [bits, blockSize] of [[4, 32], [8, 16]] as const) {
      // 5 blocks per row: an odd count, so 4-bit zero points straddle bytes differently after the cut
      const w = packed(bits, blockSize, 5, 5 * blockSize, bits)
      const full = unpackNBits(w)
      expect([...unpackNBits(sliceNBitsRows(w, 1, 4))]).toEqual(sub(full, w.k, 1, 4, 0, w.k))
      for (const [b0, b1] of [[1, 4], [0, 3], [3, 5]]) {
        const cols = sliceNBitsCols(w, b0 * blockSize, b1 * blockSize, 'w')
        expect([...unpackNBits(cols)], `${bits}-bit blocks [${b0}, ${b1})`).toEqual(sub(full, w.k, 0, 5, b0 * blockSize, b1 * blockSize))
      }
      expect(() => sliceNBitsCols(w, 1, blockSize, 'w')).toThrow(/cut its/)
    }
  })
})
