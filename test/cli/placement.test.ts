/**
 * `tandem generate --placement` as users run it: a child process through bin/tandem.mjs on the shared
 * stories260K GGUF, the devices probed for real, presets and placement files. Greedy text must not depend
 * on where the groups run (the CPU workers compute the same kernels; the one WebGPU test allows nothing
 * looser than the same greedy ids either, as the engine tests do).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { MAX_PLACEMENT_FILE_BYTES } from '../../main/cli/placement'
import { compilerSkipReason } from '../devices/compiler'
import { lavapipeSkipReason } from '../devices/lavapipe'
import { sharedModel, tempDir } from '../helpers/paths'
import { onlyJsonLine, runCli, type CliRun } from './run-cli'
import { PUBLISHED_STORIES260K_IDS } from '../helpers/published'
import { calibrationPath, modelFingerprint, readCalibration } from '../../main/engine/graph'
import { createReferenceState, loadModel, referenceForward, w8a8Linears } from '../../main/engine/model'
import { prefillW8A8Reference } from '../runtime/hetero-compare'
import { argmax } from '../graph/compare'
import { repoRoot } from '../helpers/paths'

const scratch = tempDir('tandem-cli-placement-')
afterAll(() => scratch.dispose())

const MODEL = sharedModel('stories260K/stories260K.gguf')
/** Device probing takes seconds on a busy 2-core machine; lavapipe's first shader compile ~20 s. */
const CPU_TIMEOUT_MS = 90_000
const WEBGPU_TIMEOUT_MS = 180_000

function tandem(args: string[]): Promise<CliRun> {
  return runCli(args, join(scratch.dir, 'cache'), WEBGPU_TIMEOUT_MS)
}

interface JsonOut {
  text: string
  tokens: number[]
  promptTokens: number[]
  placement: string | null
  devices: { id: string; name: string; busyMs: number; runs: number }[]
}

function parseJson(stdout: string): JsonOut {
  return onlyJsonLine(stdout, { text: expect.any(String), tokens: expect.any(Array), devices: expect.any(Array) }) as JsonOut
}

const greedy = (extra: string[]): string[] => ['generate', '--model', MODEL, '--max-tokens', '24', '--temperature', '0', '--json', ...extra]

/** A prompt of several tokens (a one-token prompt runs as a decode step), and its run without a placement, made once. */
const DOG_PROMPT = ['--prompt', 'Once upon a time there was a big dog']
let plainDog: Promise<JsonOut> | null = null
function plainDogRun(): Promise<JsonOut> {
  plainDog ??= tandem(greedy(DOG_PROMPT)).then((r) => parseJson(r.stdout))
  return plainDog
}

/** A placement file in the scratch folder. */
function placementFile(name: string, json: unknown): string {
  const path = join(scratch.dir, name)
  writeFileSync(path, typeof json === 'string' ? json : JSON.stringify(json))
  return path
}

/** cpu and cpu-2 both work in both phases: ffn moves in prefill, attention and half the lm-head in decode. */
const SPLIT = {
  version: 1,
  name: 'two CPU workers',
  prefillChunkTokens: 64,
  phases: {
    prefill: { device: 'cpu', groups: [{ layer: 'all', group: 'ffn', device: 'cpu-2' }], partitions: [] },
    decode: {
      device: 'cpu-2',
      groups: [{ layer: 'all', group: 'attention', device: 'cpu' }],
      partitions: [{ layer: 'final', group: 'lm-head', by: 'rows', devices: ['cpu', 'cpu-2'], ratio: 0.5 }]
    }
  }
}

describe('tandem generate --placement', () => {
  it.skipIf(compilerSkipReason !== null)(
    '--placement npu-prefill-gpu-decode --virtual-npu: prefill on the virtual NPU (busy, with the --ep-option launch cost), the same greedy ids as one CPU session',
    { timeout: WEBGPU_TIMEOUT_MS },
    async () => {
      const plain = await plainDogRun()
      const r = await tandem(greedy([...DOG_PROMPT, '--placement', 'npu-prefill-gpu-decode', '--virtual-npu', '--ep-option', 'tandem-virtual-npu:launch_us=3000', '--prefill-chunk', '32', '--stats']))
      expect(r.code, r.stderr).toBe(0)
      const out = parseJson(r.stdout)
      expect(out.tokens).toEqual(plain.tokens)
      expect(out.placement).toBe('Prefill on NPU, decode on GPU')
      const npu = out.devices.find((d) => d.name === 'Virtual NPU (test provider, runs on the CPU)')
      expect(npu?.busyMs ?? 0).toBeGreaterThan(0)
      // every run on the NPU waited out its modelled 3 ms launch: the option reached the device's sessions
      expect(npu?.runs ?? 0).toBeGreaterThan(0)
      expect(npu?.busyMs ?? 0).toBeGreaterThanOrEqual(3 * (npu?.runs ?? 0))
      expect(r.stderr).toMatch(/devices: .*npu-tandemvirtualnpu-0.* ready/)
    }
  )

  it.skipIf(compilerSkipReason !== null)(
    '--w8a8 on the virtual NPU: refused until the model is calibrated, then int8 on the NPU with shadow segments on the CPU — the greedy ids of the reference’s shadowed W8A8 prefill and float decode',
    { timeout: WEBGPU_TIMEOUT_MS },
    async () => {
      const cacheDir = join(scratch.dir, 'w8a8-cache')
      const run = (extra: string[]): Promise<CliRun> => runCli(greedy([...DOG_PROMPT, '--placement', 'npu-prefill-gpu-decode', '--virtual-npu', '--prefill-chunk', '32', ...extra]), cacheDir, WEBGPU_TIMEOUT_MS)
      const missing = await run(['--w8a8'])
      expect(missing.code).toBe(1)
      expect(missing.stderr).toContain('npx tandem calibrate')
      const cal = await runCli(['calibrate', '--model', MODEL, '--corpus', join(repoRoot, 'eval', 'corpus', 'calibration.txt'), '--tokens', '200'], cacheDir, WEBGPU_TIMEOUT_MS)
      expect(cal.code, cal.stderr).toBe(0)
      const r = await run(['--w8a8', '--shadow-prune', '0'])
      expect(r.code, r.stderr).toBe(0)
      const out = parseJson(r.stdout)
      const npu = out.devices.find((d) => d.name === 'Virtual NPU (test provider, runs on the CPU)')
      expect(npu?.busyMs ?? 0).toBeGreaterThan(0)
      // the oracle: the reference forward with the stored calibration's W8A8 and every layer's shadow for the NPU's
      // prefill, float for decode (on the CPU or GPU)
      const model = await loadModel(MODEL)
      if (!model.weights) throw new Error('no weights')
      const compilable = { config: model.config, weights: model.weights }
      const calibration = await readCalibration(calibrationPath(cacheDir, modelFingerprint(compilable)), model.weights)
      const reference = prefillW8A8Reference(w8a8Linears(compilable, calibration, { shadow: true, prunedPercent: 0 }))
      const state = createReferenceState(model.config, out.promptTokens.length + out.tokens.length, reference.options)
      let logits: Float32Array = new Float32Array(0)
      out.promptTokens.forEach((t, pos) => (logits = referenceForward(compilable, state, t, pos)))
      reference.prefill = false
      const want: number[] = []
      for (let i = 0; i < out.tokens.length; i++) {
        want.push(argmax(logits))
        logits = referenceForward(compilable, state, want[i], out.promptTokens.length + i)
      }
      expect(out.tokens).toEqual(want)
    }
  )

  it('without a placement reports the one CPU session and no placement', { timeout: CPU_TIMEOUT_MS }, async () => {
    const r = await tandem(greedy([]))
    expect(r.code).toBe(0)
    const out = parseJson(r.stdout)
    expect(out.tokens).toEqual(PUBLISHED_STORIES260K_IDS.slice(0, 24))
    expect(out.placement).toBeNull()
    expect(out.devices.map((d) => d.id)).toEqual(['cpu'])
    expect(out.devices[0].busyMs).toBeGreaterThan(0)
    expect(r.stderr).not.toMatch(/devices:/)
  })

  it('--placement cpu gives the same greedy text, names the placement and the busy CPU', { timeout: CPU_TIMEOUT_MS }, async () => {
    const r = await tandem(greedy(['--placement', 'cpu', '--stats']))
    expect(r.code).toBe(0)
    const out = parseJson(r.stdout)
    expect(out.tokens).toEqual(PUBLISHED_STORIES260K_IDS.slice(0, 24))
    expect(out.placement).toBe('CPU only')
    expect(out.devices).toEqual([{ id: 'cpu', name: expect.stringMatching(/^CPU/), busyMs: expect.any(Number), runs: expect.any(Number) }])
    expect(out.devices[0].busyMs).toBeGreaterThan(0)
    expect(r.stderr).toMatch(/devices: .*cpu.* ready/)
    expect(r.stderr).toMatch(/busy \(placement "CPU only"\): cpu \d+\.\d ms/)
  })

  it('a placement file split across cpu and cpu-2 (chunked prefill) gives the no-placement greedy ids; both devices are busy', { timeout: CPU_TIMEOUT_MS }, async () => {
    const prompt = DOG_PROMPT
    const plain = await plainDogRun()
    const path = placementFile('split.json', SPLIT)
    // --prefill-chunk overrides the file's 64: the prompt then crosses both devices in several chunks
    const r = await tandem(greedy([...prompt, '--placement', path, '--prefill-chunk', '3', '--stats']))
    expect(r.code).toBe(0)
    const out = parseJson(r.stdout)
    expect(out.promptTokens.length).toBeGreaterThan(6)
    expect(out.promptTokens).toEqual(plain.promptTokens)
    expect(out.tokens).toEqual(plain.tokens)
    expect(out.text).toBe(plain.text)
    expect(out.placement).toBe('two CPU workers')
    expect(out.devices.map((d) => d.id).sort()).toEqual(['cpu', 'cpu-2'])
    for (const d of out.devices) expect(d.busyMs, d.id).toBeGreaterThan(0)
    expect(out.devices.find((d) => d.id === 'cpu-2')?.name).toMatch(/same .* cores/)
    expect(r.stderr).toMatch(/busy \(placement "two CPU workers"\): .*cpu .*ms.*cpu-2 .*ms/)
  })

  it('fails with exit code 1 and a message naming the file for a missing file, bad JSON, an oversized file', async () => {
    const missing = await tandem(greedy(['--placement', join(scratch.dir, 'nope.json')]))
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/placement file .*nope\.json not found/)
    expect(missing.stdout).toBe('')
    const typo = await tandem(greedy(['--placement', 'layersplit']))
    expect(typo.code).toBe(1)
    expect(typo.stderr).toMatch(/not a preset: cpu, gpu, .*layer-split/)
    const broken = await tandem(greedy(['--placement', placementFile('broken.json', '{"version": 1,')]))
    expect(broken.code).toBe(1)
    expect(broken.stderr).toMatch(/placement file .*broken\.json is not valid JSON/)
    const huge = await tandem(greedy(['--placement', placementFile('huge.json', ' '.repeat(MAX_PLACEMENT_FILE_BYTES + 1))]))
    expect(huge.code).toBe(1)
    expect(huge.stderr).toMatch(/huge\.json is \d+ bytes; the limit is/)
  })

  it('rejects an invalid placement, naming the field', { timeout: CPU_TIMEOUT_MS }, async () => {
    const bad = { ...SPLIT, phases: { ...SPLIT.phases, decode: { ...SPLIT.phases.decode, device: 'gpu-9' } } }
    const r = await tandem(greedy(['--placement', placementFile('bad.json', bad)]))
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/placement file .*bad\.json is invalid: phases\.decode\.device: unknown device "gpu-9" \(devices here: cpu, cpu-2/)
    expect(r.stdout).toBe('')
  })
})

describe.skipIf(lavapipeSkipReason !== null)('tandem generate --placement on the software GPU', () => {
  it('layer-split runs the matmuls on webgpu-0 and the rest on the CPU, says why on stderr, same greedy ids', { timeout: WEBGPU_TIMEOUT_MS }, async () => {
    const r = await tandem(['generate', '--model', MODEL, '--max-tokens', '8', '--temperature', '0', '--json', '--placement', 'layer-split'])
    expect(r.code).toBe(0)
    const out = parseJson(r.stdout)
    expect(out.tokens).toEqual(PUBLISHED_STORIES260K_IDS.slice(0, 8))
    expect(out.placement).toBe('Layer split')
    expect(out.devices.map((d) => d.id).sort()).toEqual(['cpu', 'webgpu-0'])
    for (const d of out.devices) expect(d.busyMs, d.id).toBeGreaterThan(0)
    expect(out.devices.find((d) => d.id === 'webgpu-0')?.name).toMatch(/lavapipe/)
    // the preset's note: no NPU here, and the software GPU shares the CPU's cores
    expect(r.stderr).toMatch(/No NPU found/)
  })
})
