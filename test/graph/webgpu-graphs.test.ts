/**
 * Our graphs on the WebGPU EP (here Mesa lavapipe) with ORT's CPU fallback disabled, as the webgpu-0
 * device runs them: the whole model, the run segments and a row part of the presets. All WebGPU work of
 * this process stays on this thread (two WebGPU sessions on two threads crash onnxruntime-node).
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { createSession, discoverDevices, float32Tensor, int64Tensor, tensorFloat32Data, type DeviceInfo, type OrtTensor } from '../../main/engine/devices'
import { compileModel, compileSegment, describeValue, wholeModelSegment, type GraphOptions, type GraphTarget, type SegmentSpec } from '../../main/engine/graph'
import { createReferenceState, loadModel, referenceForward } from '../../main/engine/model'
import { buildPreset, placementToSegments, PRESET_IDS, type PlanSegment } from '../../main/engine/plan'
import { SingleSessionEngine } from '../../main/engine/runtime/session/single-session-engine'
import { Rng } from '../fixtures/rng'
import { systemTestsSkipped } from '../devices/lavapipe'
import { sharedModel } from '../helpers/paths'
import { argmax } from './compare'
import { randomModel, type RandomModel } from './random-model'

/** lavapipe compiles every new shader on first use (~15 s for a whole model's set). */
const WEBGPU_TIMEOUT_MS = 180_000
/**
 * Max |webgpu − expected| over max |expected|. Float32 graphs: the same arithmetic, reordered sums
 * (measured ~1e-6). The whole model with int8-activation MatMulNBits: WebGPU quantizes inputs with its
 * own kernel (not MLAS's CompInt8, which the reference can emulate), so it is compared with the plain
 * float32 reference, which it follows within ~1% of the logit scale (measured 0.8%); argmax must agree.
 */
const F32_TOLERANCE = 1e-4
const INT8_VS_F32_TOLERANCE = 3e-2

const CONTEXT = 40
/** 30 prompt tokens in chunks of 8, so later chunks see cached positions, then decode past the first cache growth at 32 */
const PROMPT_TOKENS = 30
const PREFILL_CHUNK = 8
const DECODE_STEPS = 4

async function webgpuSession(bytes: Uint8Array): ReturnType<typeof createSession> {
  return createSession(bytes, { ep: 'webgpu', cpuFallback: false })
}

async function cpuSession(bytes: Uint8Array): ReturnType<typeof createSession> {
  return createSession(bytes, { ep: 'cpu', cpuFallback: true, intraOpThreads: 1 })
}

function relativeDiff(got: Float32Array, want: Float32Array): number {
  let d = 0
  let scale = 1e-6
  for (let i = 0; i < want.length; i++) {
    d = Math.max(d, Math.abs(got[i] - want[i]))
    scale = Math.max(scale, Math.abs(want[i]))
  }
  return d / scale
}

/** Prefill + greedy decode on a WebGPU session vs the float32 reference: worst relative logit diff, argmax agreement. */
async function webgpuVsReference(model: RandomModel, options: GraphOptions): Promise<{ diff: number; agree: boolean }> {
  const prompt = Array.from({ length: PROMPT_TOKENS }, (_, i) => (i * 7 + 3) % model.config.vocabSize)
  const engine = new SingleSessionEngine(model, await webgpuSession(compileModel(model, options)), { contextLength: CONTEXT, prefillChunkTokens: PREFILL_CHUNK })
  const state = createReferenceState(model.config, CONTEXT)
  let diff = 0
  let agree = true
  try {
    let want = new Float32Array(0)
    for (let p = 0; p < prompt.length; p++) want = referenceForward(model, state, prompt[p], p).slice()
    let got = await engine.forward(prompt, 0)
    for (let step = 0; ; step++) {
      diff = Math.max(diff, relativeDiff(got, want))
      agree &&= argmax(got) === argmax(want)
      if (step === DECODE_STEPS) break
      const next = argmax(want)
      want = referenceForward(model, state, next, prompt.length + step).slice()
      got = await engine.forward([next], prompt.length + step)
    }
  } finally {
    await engine.dispose()
  }
  return { diff, agree }
}

/** Seeded feeds for a segment's inputs: S tokens at positions P.., caches of capacity C (slots ≥ P hold junk). */
function segmentFeeds(model: RandomModel, spec: SegmentSpec, seed: number): Record<string, OrtTensor> {
  const S = 3
  const P = 5
  const C = 32
  const rng = new Rng(seed)
  const feeds: Record<string, OrtTensor> = {}
  for (const name of spec.inputs) {
    const { elem, dims } = describeValue(model.config, name)
    const shape = dims.map((d) => (d === 'seq' ? S : d === 'capacity' ? C : d))
    if (!shape.every((d): d is number => typeof d === 'number')) throw new Error(`${name}: unknown dims ${dims.join(', ')}`)
    if (elem === 'int64') feeds[name] = int64Tensor(BigInt64Array.from({ length: S }, (_, i) => BigInt(P + i)), shape)
    else feeds[name] = float32Tensor(rng.fillNormal(new Float32Array(shape.reduce((a, d) => a * d, 1)), 1), shape)
  }
  return feeds
}

/** Runs a graph compiled per target on webgpu and on the CPU EP with the same feeds; worst relative output diff. */
async function webgpuVsCpu(compile: (target: GraphTarget) => Uint8Array, feeds: Record<string, OrtTensor>): Promise<number> {
  const gpu = await webgpuSession(compile('webgpu'))
  const cpu = await cpuSession(compile('cpu'))
  try {
    const [a, b] = [await gpu.run(feeds), await cpu.run(feeds)]
    expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort())
    return Math.max(...Object.keys(b).map((k) => relativeDiff(tensorFloat32Data(a[k], k), tensorFloat32Data(b[k], k))))
  } finally {
    await Promise.all([gpu.release(), cpu.release()])
  }
}

// Runs wherever WebGPU does (lavapipe here, a real GPU elsewhere); left out only when told to skip system tests.
describe.skipIf(systemTestsSkipped)('graphs on the WebGPU EP without CPU fallback', () => {
  let stories: RandomModel
  let devices: DeviceInfo[]
  beforeAll(async () => {
    const loaded = await loadModel(sharedModel('stories260K/stories260K.gguf'))
    if (!loaded.weights) throw new Error('stories260K loaded without weights')
    stories = { config: loaded.config, weights: loaded.weights }
    devices = await discoverDevices()
  }, WEBGPU_TIMEOUT_MS)

  it('the CPU-target graph is refused (int64 shape arithmetic would fall back to the CPU EP)', async () => {
    await expect(webgpuSession(compileModel(stories, { ropeTableLength: CONTEXT }))).rejects.toThrow(/fallback to CPU EP has been explicitly disabled/)
  })

  it('the WebGPU-target graph computes exactly what the CPU graph does (both on the CPU EP)', async () => {
    const feeds = segmentFeeds(stories, wholeModelSegment(stories.config), 1)
    const cpu = await cpuSession(compileModel(stories, { ropeTableLength: CONTEXT }))
    const same = await cpuSession(compileModel(stories, { ropeTableLength: CONTEXT, target: 'webgpu' }))
    try {
      const [a, b] = [await cpu.run(feeds), await same.run(feeds)]
      for (const k of Object.keys(a)) expect(relativeDiff(tensorFloat32Data(b[k], k), tensorFloat32Data(a[k], k)), k).toBeLessThan(1e-6)
    } finally {
      await Promise.all([cpu.release(), same.release()])
    }
  })

  it('stories260K whole model: prefill in chunks and decode match the reference', async () => {
    const r = await webgpuVsReference(stories, { ropeTableLength: CONTEXT, target: 'webgpu' })
    expect(r.agree).toBe(true)
    expect(r.diff).toBeLessThan(F32_TOLERANCE)
  }, WEBGPU_TIMEOUT_MS)

  it('random Q8_0 GQA model with qkv bias (int8-activation MatMulNBits): close to the float reference', async () => {
    const model = randomModel({ seed: 51, dim: 64, hiddenDim: 128, nHeads: 4, nKvHeads: 2, vocabSize: 97, encoding: 'q8_0', qkvBias: true, ropePairing: 'rotate-half' })
    const r = await webgpuVsReference(model, { ropeTableLength: CONTEXT, target: 'webgpu' })
    expect(r.agree).toBe(true)
    expect(r.diff).toBeLessThan(INT8_VS_F32_TOLERANCE)
  }, WEBGPU_TIMEOUT_MS)

  it('every preset segment placed on webgpu-0 (runs and a row part) loads and matches the CPU EP', async () => {
    const options = (target: GraphTarget): GraphOptions => ({ ropeTableLength: CONTEXT, target })
    const onGpu = (id: string): boolean => devices.find((d) => d.id === id)?.ep === 'webgpu'
    const seen = new Set<string>()
    let checked = 0
    for (const id of PRESET_IDS) {
      if (id === 'auto') continue // needs a measured profile; it picks among the same kinds of segments
      const { placement } = buildPreset(id, stories.config, devices)
      for (const phase of ['prefill', 'decode'] as const) {
        const segments: PlanSegment[] = placementToSegments(placement, phase, stories.config)
        for (const seg of segments) {
          // one check per distinct graph shape: same group kinds (layers differ only in weights) and slice
          const kinds = seg.kind === 'run' ? seg.spec.groups.map((g) => `${g.kind}${g.layer === null ? '/final' : ''}`).join(',') : ''
          if (seg.kind === 'run' && onGpu(seg.device)) {
            if (seen.has(kinds)) continue
            seen.add(kinds)
            const diff = await webgpuVsCpu((t) => compileSegment(stories, seg.spec, options(t)), segmentFeeds(stories, seg.spec, checked))
            expect(diff, `${id} ${phase} run ${kinds}`).toBeLessThan(F32_TOLERANCE)
            checked++
          } else if (seg.kind === 'partition') {
            for (const part of seg.parts) {
              const key = `${seg.group}/${JSON.stringify(part.slice)}`.replace(/_\d+/g, '')
              if (!onGpu(part.device) || part.slice.by !== 'rows' || seen.has(key)) continue
              seen.add(key)
              const slice = part.slice
              const diff = await webgpuVsCpu((t) => compileSegment(stories, seg.spec, options(t), slice), segmentFeeds(stories, seg.spec, checked))
              expect(diff, `${id} ${phase} ${seg.group} part`).toBeLessThan(F32_TOLERANCE)
              checked++
            }
          }
        }
      }
    }
    // gpu: the whole model; layer split: qkv, attn-out, ffn, lm-head; tensor split: a row part of each
    expect(checked).toBeGreaterThanOrEqual(9)
  }, WEBGPU_TIMEOUT_MS)
})
