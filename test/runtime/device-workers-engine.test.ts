import { beforeAll, describe, expect, it } from 'vitest'
import { discoverDevices, type DeviceInfo } from '../../main/engine/devices'
import { loadModel } from '../../main/engine/model'
import { buildPreset, parsePlacement, PRESET_IDS, weightInfoOf, type Placement } from '../../main/engine/plan'
import { DeviceWorkersEngine } from '../../main/engine/runtime/hetero/device-workers-engine'
import { openModelWorker } from '../../main/engine/runtime/model-worker/model-worker-client'
import { TextModel } from '../../main/engine/runtime/text-model'
import { lavapipeSkipReason } from '../devices/lavapipe'
import { argmax, EXACT_TOLERANCE, INT8_FLIP_TOLERANCE } from '../graph/compare'
import { randomModel } from '../graph/random-model'
import { sharedModel, tempDir } from '../helpers/paths'
import { PUBLISHED_STORIES260K_IDS } from '../helpers/published'
import { syntheticProfile } from '../plan/fixtures'
import { compareHetero, usesGpu } from './hetero-compare'

// Heterogeneous placements on this machine's real devices (cpu, cpu-2, webgpu-0 on Mesa lavapipe), checked
// against the reference forward. WebGPU computes in a different order (and ignores int8 activations), so
// placements that use it get the looser bound and must still pick the same greedy tokens.
const STORIES = 'stories260K/stories260K.gguf'
/** BOS + the first 7 published ids: a prompt of 8 that the engine prefills in 2 pipelined chunks of 4. */
const PROMPT = [1, ...PUBLISHED_STORIES260K_IDS.slice(0, 7)]
const CHUNK = 4
const WEBGPU_TIMEOUT_MS = 120_000

let devices: DeviceInfo[] = []
let stories: { config: Awaited<ReturnType<typeof loadModel>>['config']; weights: NonNullable<Awaited<ReturnType<typeof loadModel>>['weights']> }

beforeAll(async () => {
  devices = await discoverDevices()
  const m = await loadModel(sharedModel(STORIES))
  if (!m.weights) throw new Error('no weights')
  stories = { config: { ...m.config, contextLength: 128 }, weights: m.weights }
}, 60_000)

const ready = (id: string): boolean => devices.some((d) => d.id === id && d.status === 'ready')

describe.skipIf(lavapipeSkipReason !== null)('DeviceWorkersEngine: presets on stories260K vs the reference and the published greedy ids', () => {
  for (const id of PRESET_IDS) {
    it(`${id}`, { timeout: WEBGPU_TIMEOUT_MS }, async () => {
      const profile = syntheticProfile(stories.config, {
        cpu: { rest: { fixedMs: 0.05, perTokenMs: 0.01 }, groups: { ffn: { fixedMs: 0.05, perTokenMs: 0.05 } } },
        'cpu-2': { rest: { fixedMs: 0.05, perTokenMs: 0.01 }, groups: { ffn: { fixedMs: 0.05, perTokenMs: 0.02 } } },
        'webgpu-0': { rest: { fixedMs: 1, perTokenMs: 0.1 } }
      })
      const { placement } = buildPreset(id, stories.config, devices, { prefillChunkTokens: CHUNK, profile })
      const r = await compareHetero(stories, placement, devices, PROMPT, PUBLISHED_STORIES260K_IDS.length - PROMPT.length)
      const gpu = usesGpu(placement, devices)
      console.log(
        `${id}: ${r.usage.devices.map((d) => `${d.id} ${d.busyMs.toFixed(0)} ms/${d.runs} runs`).join(', ')}; ` +
          `max |Δ| ${r.maxAbsDiff.toExponential(2)} of ${r.logitScale.toFixed(1)}; setup ${r.setupMs.toFixed(0)} ms, run ${r.runMs.toFixed(0)} ms`
      )
      expect(r.maxAbsDiff).toBeLessThan((gpu ? INT8_FLIP_TOLERANCE : EXACT_TOLERANCE) * r.logitScale)
      expect(r.top1Equal).toBe(true)
      expect(r.ids).toEqual(PUBLISHED_STORIES260K_IDS.slice(PROMPT.length - 1))
      // every device the placement uses did work
      for (const d of r.usage.devices) expect(d.busyMs, d.id).toBeGreaterThan(0)
      if (id === 'layer-split' || id === 'tensor-split') expect(r.usage.devices.map((d) => d.id).sort()).toEqual(['cpu', 'webgpu-0'])
    })
  }
})

describe.skipIf(lavapipeSkipReason !== null)('DeviceWorkersEngine: partitions on a random GQA model with quantized matmuls', () => {
  // dim 64, 4 query heads on 2 KV heads, ffn 128 (w_down cut in 32-wide blocks), Q8_0 weights -> MatMulNBits
  const model = randomModel({ seed: 11, dim: 64, nHeads: 4, nKvHeads: 2, hiddenDim: 128, nLayers: 2, vocabSize: 97, contextLength: 64, encoding: 'q8_0' })
  const prompt = [3, 17, 5, 88, 41, 2, 9, 60, 33, 71, 12]
  const parse = (json: unknown): Placement => parsePlacement(json, model.config, devices, weightInfoOf(model.weights))
  const all = (by: 'rows' | 'sequence', pair: [string, string], extra: Record<string, number>): unknown[] =>
    ['qkv', 'attn-out', 'ffn'].map((group) => ({ layer: 'all', group, by, devices: pair, ...extra }))

  it('row partitions on cpu + cpu-2, attention on a different device per phase (KV rows appended across workers)', async () => {
    const placement = parse({
      version: 1,
      name: 'rows on two CPU workers',
      prefillChunkTokens: 4,
      phases: {
        prefill: { device: 'cpu', partitions: [...all('rows', ['cpu', 'cpu-2'], { ratio: 0.5 }), { layer: 'final', group: 'lm-head', by: 'rows', devices: ['cpu-2', 'cpu'], ratio: 0.3 }] },
        decode: { device: 'cpu-2', groups: [{ layer: 1, group: 'attention', device: 'cpu' }], partitions: all('rows', ['cpu-2', 'cpu'], { ratio: 0.25 }) }
      }
    })
    const r = await compareHetero(model, placement, devices, prompt, 8)
    expect(r.int8Matmuls).toBeGreaterThan(0)
    expect(r.maxAbsDiff).toBeLessThan(INT8_FLIP_TOLERANCE * r.logitScale)
    expect(r.top1Equal).toBe(true)
  })

  it('sequence partitions in prefill and row partitions in decode across cpu and the software GPU', { timeout: WEBGPU_TIMEOUT_MS }, async () => {
    const placement = parse({
      version: 1,
      name: 'sequence + rows with the GPU',
      prefillChunkTokens: 5,
      phases: {
        prefill: { device: 'cpu', partitions: all('sequence', ['cpu', 'webgpu-0'], { standardLength: 3 }) },
        decode: { device: 'webgpu-0', groups: [{ layer: 'all', group: 'attention', device: 'cpu' }], partitions: [...all('rows', ['webgpu-0', 'cpu'], { ratio: 0.5 }), { layer: 'final', group: 'lm-head', by: 'rows', devices: ['cpu', 'webgpu-0'], ratio: 0.5 }] }
      }
    })
    // WebGPU's MatMulNBits computes in float, so the CPU graphs do too here (no int8 activations on either side)
    const r = await compareHetero(model, placement, devices, prompt, 6, { int8Activations: false })
    expect(r.maxAbsDiff).toBeLessThan(INT8_FLIP_TOLERANCE * r.logitScale)
    expect(r.top1Equal).toBe(true)
    expect(r.usage.devices.every((d) => d.busyMs > 0)).toBe(true)
  })

  it('a device that cannot open its graph fails setup naming the device and the segment; nothing falls back', async () => {
    const cpu = devices.find((d) => d.id === 'cpu')
    if (!cpu) throw new Error('no cpu device')
    const bogus: DeviceInfo = { ...cpu, id: 'bogus-0', ep: 'no-such-ep', sharesComputeWith: [] }
    const withBogus = [...devices, bogus]
    const placement = parsePlacement(
      { version: 1, name: 'bogus ffn', prefillChunkTokens: 4, phases: { prefill: { device: 'cpu', groups: [{ layer: 0, group: 'ffn', device: 'bogus-0' }] }, decode: { device: 'cpu' } } },
      model.config,
      withBogus
    )
    const cache = tempDir()
    try {
      await expect(DeviceWorkersEngine.create(model, placement, { contextLength: 16, devices: withBogus, graph: { ropeTableLength: 16 }, cacheDir: cache.dir })).rejects.toThrow(
        /device bogus-0 \(no-such-ep\) cannot open the graph for layer 0 ffn/
      )
    } finally {
      cache.dispose()
    }
  })
})

describe.skipIf(lavapipeSkipReason !== null)('ModelWorkerClient with a placement', () => {
  it('a CPU + software GPU split runs in device workers: published ids, live usage on both, per-generation device stats', { timeout: WEBGPU_TIMEOUT_MS }, async () => {
    const tmp = tempDir()
    const { placement } = buildPreset('layer-split', stories.config, devices, { prefillChunkTokens: CHUNK })
    const model = await TextModel.open(sharedModel(STORIES), { cacheDir: tmp.dir, threads: 1, maxContext: 64, placement, devices })
    try {
      expect(model.worker.placement).toEqual(placement)
      expect(model.worker.compileInfo.graphPath).toMatch(/graphs on cpu, webgpu-0, 0 from the cache\)$/)
      expect(model.worker.compileInfo.cacheHit).toBe(false)
      const gen = model.generate({ promptIds: [1], maxTokens: 16, sampling: { temperature: 0 } })
      const result = await gen.result
      expect(result.tokens).toEqual(PUBLISHED_STORIES260K_IDS.slice(0, 16))
      const stats = result.stats.devices
      expect(stats.map((d) => d.id).sort()).toEqual(['cpu', 'webgpu-0'])
      for (const d of stats) expect(d.busyMs, d.id).toBeGreaterThan(0)
      const usage = model.worker.usage()
      expect(usage.atMs).toBeGreaterThan(Date.now() - 60_000)
      for (const d of usage.devices) expect(d.runs).toBeGreaterThan(0)
    } finally {
      await model.dispose()
      tmp.dispose()
    }
  })

  it('segments come from the on-disk graph cache: reopening compiles nothing, a changed placement compiles only its new segments', async () => {
    const tmp = tempDir()
    const open = async (placement: Placement): Promise<{ hits: number; graphs: number; id: number }> => {
      const engine = await DeviceWorkersEngine.create(stories, placement, { contextLength: 64, devices, threads: 1, graph: { ropeTableLength: 64 }, cacheDir: tmp.dir })
      try {
        return { hits: engine.setupInfo.cacheHits, graphs: engine.setupInfo.graphs, id: argmax(await engine.forward(PROMPT, 0)) }
      } finally {
        await engine.dispose()
      }
    }
    const split = (layer: number): Placement =>
      parsePlacement({ version: 1, name: `split ${layer}`, prefillChunkTokens: CHUNK, phases: { prefill: { device: 'cpu', groups: [{ layer, group: 'ffn', device: 'cpu-2' }] }, decode: { device: 'cpu' } } }, stories.config, devices)
    try {
      const first = await open(split(0))
      expect(first.hits).toBe(0)
      const again = await open(split(0))
      expect(again).toEqual({ hits: again.graphs, graphs: first.graphs, id: first.id })
      // the FFN moves from layer 0 to layer 1: the decode graph (the whole model on cpu) is unchanged
      const moved = await open(split(1))
      expect(moved.hits).toBeGreaterThan(0)
      expect(moved.hits).toBeLessThan(moved.graphs)
      expect(moved.id).toBe(first.id)
    } finally {
      tmp.dispose()
    }
  })

  it('everything on one CPU device keeps the single-session fast path, reporting its session time', async () => {
    const tmp = tempDir()
    const { placement } = buildPreset('cpu', stories.config, devices)
    const runner = await openModelWorker(sharedModel(STORIES), { cacheDir: tmp.dir, threads: 1, maxContext: 64, placement, devices })
    try {
      expect(runner.compileInfo.graphPath).toMatch(/\.onnx$/)
      let token = 1
      for (let pos = 0; pos < 8; pos++) token = argmax(await runner.forward([token], pos))
      expect(token).toBe(PUBLISHED_STORIES260K_IDS[7])
      const [cpu, ...rest] = runner.usage().devices
      expect(rest).toEqual([])
      expect(cpu.id).toBe('cpu')
      expect(cpu.runs).toBe(8)
      expect(cpu.busyMs).toBeGreaterThan(0)
    } finally {
      await runner.dispose()
      tmp.dispose()
    }
    await expect(openModelWorker(sharedModel(STORIES), { placement })).rejects.toThrow(/needs the device list/)
  })

  it('the worker re-validates the placement against the devices it is given', async () => {
    expect(ready('webgpu-0')).toBe(true)
    const { placement } = buildPreset('gpu', stories.config, devices)
    const cpuOnly = devices.filter((d) => d.id !== 'webgpu-0')
    await expect(openModelWorker(sharedModel(STORIES), { maxContext: 64, placement, devices: cpuOnly })).rejects.toThrow(/unknown device "webgpu-0"/)
  })
})
