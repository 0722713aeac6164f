import { beforeAll, describe, expect, it } from 'vitest'
import { discoverDevices, type DeviceInfo } from '../../main/engine/devices'
import {
  FINAL_GROUPS,
  MATMUL_GROUPS,
  OP_GROUP_NAMES,
  parsePlacement,
  PlacementError,
  weightInfoOf,
  type Placement
} from '../../main/engine/plan'
import { lavapipeSkipReason } from '../devices/lavapipe'
import { Rng } from '../fixtures/rng'
import { EXACT_TOLERANCE, INT8_FLIP_TOLERANCE } from '../graph/compare'
import { randomModel } from '../graph/random-model'
import { compareHetero, usesGpu } from './hetero-compare'

// Property: any valid placement — random devices per op group and phase, random row and sequence partitions
// with random ratios and standard lengths, a random prefill chunk — computes what the reference computes.
const PLACEMENTS = 10
const SEED = 2026
const model = randomModel({ seed: 5, dim: 64, nHeads: 4, nKvHeads: 2, hiddenDim: 128, nLayers: 2, vocabSize: 61, contextLength: 32 })
const PROMPT = [7, 3, 44, 12, 9, 30, 1, 58, 21]
const DECODE_STEPS = 4

let devices: DeviceInfo[] = []
beforeAll(async () => {
  devices = await discoverDevices()
}, 60_000)

/** One random placement JSON (not necessarily valid: the validator decides). */
function randomPlacementJson(rng: Rng, ids: readonly string[], index: number): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng.uniform() * xs.length)]
  const chunk = 2 + Math.floor(rng.uniform() * 7)
  const layerFor = (group: string): number | 'all' | 'final' => (FINAL_GROUPS.some((g) => g === group) ? 'final' : rng.uniform() < 0.5 ? 'all' : Math.floor(rng.uniform() * model.config.nLayers))
  const phase = (prefill: boolean): unknown => {
    const groups = Array.from({ length: Math.floor(rng.uniform() * 4) }, () => {
      const group = pick(OP_GROUP_NAMES)
      return { layer: layerFor(group), group, device: pick(ids) }
    })
    const partitions = Array.from({ length: Math.floor(rng.uniform() * 3) }, () => {
      const group = pick(MATMUL_GROUPS)
      const a = pick(ids)
      const b = pick(ids.filter((d) => d !== a))
      const layer = layerFor(group)
      if (prefill && group !== 'lm-head' && rng.uniform() < 0.5) return { layer, group, by: 'sequence', devices: [a, b], standardLength: 1 + Math.floor(rng.uniform() * (chunk - 1)) }
      return { layer, group, by: 'rows', devices: [a, b], ratio: Math.round((0.15 + 0.7 * rng.uniform()) * 100) / 100 }
    })
    return { device: pick(ids), groups, partitions }
  }
  return { version: 1, name: `random ${index}`, prefillChunkTokens: chunk, phases: { prefill: phase(true), decode: phase(false) } }
}

/** `count` valid placements from a seeded generator; invalid drafts are redrawn. */
function randomPlacements(count: number): Placement[] {
  const rng = new Rng(SEED)
  const ids = devices.filter((d) => d.status === 'ready').map((d) => d.id)
  const weights = weightInfoOf(model.weights)
  const out: Placement[] = []
  for (let attempt = 0; out.length < count; attempt++) {
    if (attempt > 50 * count) throw new Error(`only ${out.length} of ${count} random placements were valid`)
    try {
      out.push(parsePlacement(randomPlacementJson(rng, ids, out.length), model.config, devices, weights))
    } catch (err) {
      if (!(err instanceof PlacementError)) throw err
    }
  }
  return out
}

describe.skipIf(lavapipeSkipReason !== null)('random valid placements compute what the reference computes', () => {
  it(`${PLACEMENTS} seeded placements over cpu, cpu-2 and webgpu-0`, { timeout: 180_000 }, async () => {
    const placements = randomPlacements(PLACEMENTS)
    const partitions = placements.flatMap((p) => [...p.phases.prefill.partitions, ...p.phases.decode.partitions])
    // the generator really exercises both kinds of partition and every device
    expect(partitions.some((p) => p.by === 'rows')).toBe(true)
    expect(partitions.some((p) => p.by === 'sequence')).toBe(true)
    expect(placements.some((p) => usesGpu(p, devices))).toBe(true)
    for (const placement of placements) {
      const r = await compareHetero(model, placement, devices, PROMPT, DECODE_STEPS)
      const bound = (usesGpu(placement, devices) ? INT8_FLIP_TOLERANCE : EXACT_TOLERANCE) * r.logitScale
      const summary = `${placement.name} (chunk ${placement.prefillChunkTokens}; ${r.usage.devices.map((d) => d.id).join(', ')}): max |Δ| ${r.maxAbsDiff.toExponential(2)}, setup ${r.setupMs.toFixed(0)} ms`
      console.log(summary)
      expect(r.maxAbsDiff, `${summary}\n${JSON.stringify(placement.phases)}`).toBeLessThan(bound)
      expect(r.top1Equal, `${summary}\n${JSON.stringify(placement.phases)}`).toBe(true)
    }
  })
})
