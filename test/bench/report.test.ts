/**
 * The bench's model table (bench/report.ts, bench/report-models.ts) on hand-made records: ratios and
 * targets from medians, the per-model summary's loads and peak RSS, the better of the two bandwidth
 * probes as the decode ceiling, and a model whose Tandem side failed to load still gets its row (with
 * the error and llama.cpp's figures). Also `--models` groups.
 */
import { describe, expect, it } from 'vitest'
import { parseBenchArgs } from '../../bench/args'
import type { GgufSummary } from '../../bench/gguf-summary'
import type { BenchModelFile, BenchModelId } from '../../bench/models'
import { combineLimits, modelRows, renderMarkdown } from '../../bench/report'
import { PHASES, type LoadRecord, type ModelRecord, type PeerPhaseRecord, type PhaseRecord } from '../../bench/schedule'

const summary: GgufSummary = {
  fileSizeBytes: 1e9, nLayers: 2, dim: 64, nHeads: 4, nKvHeads: 2, headDim: 16, vocabSize: 100,
  weightBytesPerToken: 1e9, layerMatrixParams: 1e6, headParams: 1e4, normalTokenIds: [5, 6]
}

const limits = combineLimits([[{ threads: 2, bandwidthGBs: [10, 12], readLoopGBs: [20, 18], matmulGflops: [100, 90] }]])

function peer(ms: number[]): PeerPhaseRecord {
  return { threads: 2, ms, otherCpuPct: ms.map(() => 0), probeMs: { 2: ms }, tokens: [1, 2, 3], contextPrefillMs: null }
}

function model(id: BenchModelId, phases: PhaseRecord[], loads: LoadRecord[], coldLoad: LoadRecord | null, errors: ModelRecord['errors'] = {}): ModelRecord {
  const file: BenchModelFile = { id, label: `label-${id}`, path: `/m/${id}.gguf`, sizeBytes: 8e8, generatedMs: 120_000, generatedNow: false }
  return { model: file, summary, coldLoad, loads, phases, errors, wallMs: 1 }
}

const load = (peer: LoadRecord['peer'], loadMs: number, peakRssBytes: number, hit: boolean | null = null): LoadRecord => ({
  peer, threads: 2, loadMs, peakRssBytes, details: hit === null ? {} : { graphCacheHit: hit, compileMs: 500 }
})

describe('bench report', () => {
  it('takes the higher bandwidth probe as the decode ceiling', () => {
    expect(limits.bandwidthGBs).toBe(12)
    expect(limits.readLoopGBs).toBe(20)
    expect(limits.decodeCeilingGBs).toBe(20)
    expect(limits.decodeCeilingProbe).toBe('read loop')
  })

  it('summarizes a model run by both peers', () => {
    // Tandem twice as fast in every phase (half the milliseconds)
    const phases = PHASES.map((phase) => ({ phase, peers: { tandem: peer([50, 40, 60]), 'llama.cpp': peer([100, 80, 120]) } }))
    const m = model('1b-q4_k_m', phases, [load('tandem', 2000, 1.5 * 2 ** 30, true), load('llama.cpp', 1000, 1 * 2 ** 30)], load('tandem', 9000, 2 * 2 ** 30, false))
    const rows = modelRows(m, limits)
    const decode = rows.find((r) => r.phase === 'decodeShort')
    expect(decode?.ratio).toBeCloseTo(2)
    expect(decode?.target).toBe(1.2)
    expect(decode?.met).toBe(true)
    // 128 steps in 50 ms: 2,560 tok/s × 1 GB per token ÷ 20 GB/s
    expect(decode?.peers.tandem?.limitSharePct).toBeCloseTo((100 * 1e9 * 2560) / 20e9)
    const md = renderMarkdown({ title: 't', rows, models: [m], limits, machineLine: 'machine', notes: [] })
    // first load 9.0 s (compile 0.5 s); cached 2.0 s; llama.cpp 1.0 s; RSS 2048 / 1536 / 1024 MiB, ratio 2× (over the target)
    expect(md).toContain('| 9.0 (0.5) | 2.0 / 1.0 | 2048 / 1536 / 1024 (2.00× ✗) |')
    expect(md).toContain('| label-1b-q4_k_m | 0.80 (120.0) | 10240 / 5120 (2.00×) | 50 / 100 | 2560 / 1280 (2.00×) |')
  })

  it("keeps a model whose Tandem side failed to load, with llama.cpp's figures and the error", () => {
    const phases = PHASES.map((phase) => ({ phase, peers: { 'llama.cpp': peer([100, 100, 100]) } }))
    const m = model('qwen1.5b-q8_0', phases, [load('llama.cpp', 1000, 2 ** 30)], null, { tandem: 'GraphTooLargeError: the graph | weights exceed 1.94 GiB' })
    const rows = modelRows(m, limits)
    expect(rows.every((r) => r.ratio === null && r.met === null && r.peers.tandem === undefined)).toBe(true)
    const md = renderMarkdown({ title: 't', rows, models: [m], limits, machineLine: 'machine', notes: [] })
    expect(md).toContain('tandem: GraphTooLargeError: the graph / weights exceed 1.94 GiB |')
    expect(md).toContain('| label-qwen1.5b-q8_0 | prefill 512 | — | 5120 | — |')
  })
})

describe('bench args', () => {
  it('expands model groups and keeps run order', () => {
    expect(parseBenchArgs(['--models', '8b,1b']).models).toEqual(['1b-q4_k_m', '1b-q8_0', '8b'])
    const all = parseBenchArgs(['--models', 'default,3b,8b']).models
    expect(all.slice(-2)).toEqual(['3b', '8b'])
    expect(all).toContain('qwen1.5b-q4_k_m')
    expect(() => parseBenchArgs(['--models', '70b'])).toThrow(/unknown model/)
  })

  it('runs the long-context check by default, not in --quick', () => {
    expect(parseBenchArgs([]).longContext).toBe(true)
    expect(parseBenchArgs(['--quick']).longContext).toBe(false)
    expect(parseBenchArgs(['--only', 'long-context'])).toMatchObject({ onlyLongContext: true, models: [] })
  })

  it('runs the NPU-path section only when asked', () => {
    expect(parseBenchArgs([]).virtualNpu).toBe(false)
    expect(parseBenchArgs(['--virtual-npu'])).toMatchObject({ virtualNpu: true, onlyVirtualNpu: false })
    expect(parseBenchArgs(['--only', 'virtual-npu'])).toMatchObject({ virtualNpu: true, onlyVirtualNpu: true, models: [] })
    expect(parseBenchArgs(['--only', 'npu-schedule'])).toMatchObject({ onlyNpuSchedule: true, onlyVirtualNpu: false, models: [] })
    expect(() => parseBenchArgs(['--only', 'gpu'])).toThrow(/--only takes/)
  })
})
