/**
 * The Placements section's arithmetic (bench/placements-report.ts) on a small hand-made record: rates,
 * busy shares, greedy agreement with the CPU-only run, Auto against the best preset, the hand-off spread.
 */
import { describe, expect, it } from 'vitest'
import type { PlacementRun, PlacementsRecord, TimedCall } from '../../bench/placements'
import { renderPlacementsMarkdown, summarizePlacements } from '../../bench/placements-report'

const call = (ms: number, busy: Record<string, number>): TimedCall => ({ ms, busy: Object.entries(busy).map(([id, busyMs]) => ({ id, busyMs })), otherCpuPct: 0, count: 1 })

function run(id: PlacementRun['id'], prefillMs: number[], decodeMs: number[], tokens: number[], extra: Partial<PlacementRun> = {}): PlacementRun {
  return {
    id,
    label: id,
    note: null,
    placement: null,
    skipped: null,
    predictedMs: { prefill: 5, decode: 0.5 },
    sameAs: [],
    deviceIds: ['cpu'],
    loadMs: 1,
    setup: '',
    prefill: prefillMs.map((ms) => call(ms, { cpu: ms / 2 })),
    decode: decodeMs.map((ms) => call(ms, { cpu: ms / 4, 'webgpu-0': ms / 2 })),
    tokens,
    ...extra
  }
}

function record(runs: PlacementRun[]): PlacementsRecord {
  return {
    model: { label: 'm', path: '/m' },
    promptTokens: 128,
    decodeSteps: 4,
    prefillChunkTokens: 128,
    reps: 3,
    devices: [],
    discoverMs: 1,
    profileMs: 1,
    runs,
    handoff: [10, 12, 14].map((us) => ({ sabAtomicsUsPerHop: us, postMessageUsPerHop: 3 * us, hops: 100, reps: 1 })),
    wallMs: 1
  }
}

describe('summarizePlacements', () => {
  it('derives rates, busy shares and greedy agreement per placement', () => {
    const s = summarizePlacements(record([run('cpu', [10, 20, 40], [4, 8, 16], [1, 2, 3, 4, 5]), run('gpu', [100, 100, 100], [40, 40, 40], [1, 2, 9, 4, 5])]))
    const cpu = s.rows[0]
    // 128 tokens in 20 ms (median), 4 steps in 8 ms (median)
    expect(cpu.prefillTps?.median).toBeCloseTo(6400)
    expect(cpu.prefillTps?.max).toBeCloseTo(12800)
    expect(cpu.decodeTps?.median).toBeCloseTo(500)
    expect(cpu.measuredMs).toEqual({ prefill: 20, decode: 2 })
    expect(cpu.bestMs).toEqual({ prefill: 10, decode: 1 })
    expect(cpu.prefillBusy).toEqual([{ id: 'cpu', pct: 50 }])
    expect(cpu.decodeBusy).toEqual([
      { id: 'cpu', pct: 25 },
      { id: 'webgpu-0', pct: 50 }
    ])
    expect(cpu.agreeingTokens).toBe(5)
    expect(s.rows[1].agreeingTokens).toBe(2)
    expect(s.handoff?.sabAtomicsUs.median).toBe(12)
    expect(s.handoff?.postMessageUs.median).toBe(36)
  })

  it('compares Auto with the fastest preset by median and best rep, and flags an identical placement', () => {
    const runs = [
      run('cpu', [10, 10, 10], [4, 4, 4], [1], { sameAs: ['auto'] }),
      run('gpu', [50, 50, 50], [40, 40, 40], [1]),
      run('auto', [10, 11, 12], [4, 5, 3], [1], { sameAs: ['cpu'] })
    ]
    const s = summarizePlacements(record(runs))
    const prefill = s.auto?.find((c) => c.phase === 'prefill' && c.statistic === 'median')
    expect(prefill).toMatchObject({ bestId: 'cpu', within: false, samePlacement: true })
    expect(prefill?.ratio).toBeCloseTo(10 / 11)
    const decodeBest = s.auto?.find((c) => c.phase === 'decode' && c.statistic === 'best')
    expect(decodeBest).toMatchObject({ bestId: 'cpu', within: true })
    expect(decodeBest?.ratio).toBeCloseTo(4 / 3)
    const md = renderPlacementsMarkdown(record(runs), s)
    expect(md).toMatch(/Verdict: Auto runs the same placement as cpu/)
    expect(md).toMatch(/Atomics is 3\.0× faster/)
  })

  it('lists a skipped preset with its reason and leaves Auto out of the comparison when it did not run', () => {
    const runs = [run('cpu', [10], [4], [1]), run('auto', [], [], [], { skipped: 'not valid on this machine: no profile' })]
    const s = summarizePlacements(record(runs))
    expect(s.rows[1].ran).toBe(false)
    expect(s.auto).toBeNull()
    expect(renderPlacementsMarkdown(record(runs), s)).toMatch(/\| auto \|.*not valid on this machine: no profile \|/)
  })
})
