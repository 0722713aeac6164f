/**
 * Devices and placement through the API host, over a real SQLite file and this machine's real devices
 * (probed once per app): the device list, presets resolved for stories260K, custom placements checked
 * against the model, the choice persisted across app re-creation, and malformed input refused clearly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadModel, profileCacheKeys, DEFAULT_PREFILL_CHUNK_TOKENS, OP_GROUP_NAMES, type DeviceInfo, type Profile } from '../../main/engine'
import { modelShapeKey } from '../../main/engine/plan'
import { AutoProfiles } from '../../main/services'
import { API_LIMITS, type DeviceView, type PlacementJson, type PlacementView } from '../../preload/api'
import { sharedModel, tempDir } from '../helpers/paths'
import { appFixture, type AppFixture } from './app-fixture'

const MODEL = (): string => sharedModel('stories260K/stories260K.gguf')

const scratch = tempDir('tandem-devices-')
let f: AppFixture
let devices: DeviceView[]

beforeAll(async () => {
  f = appFixture({ dir: scratch.dir })
  await f.ok('settings:update', { defaultModelId: MODEL() })
  devices = await f.ok<DeviceView[]>('devices:list')
})
afterAll(async () => {
  await f.dispose()
  scratch.dispose()
})

const ready = (id: string): boolean => devices.some((d) => d.id === id && d.status === 'ready')

describe('devices.list', () => {
  it('lists every device with its status; the CPU is ready, and a device that is not says why', () => {
    expect(devices[0]).toMatchObject({ id: 'cpu', kind: 'cpu', ep: 'cpu', status: 'ready', reason: null })
    for (const d of devices) {
      expect(Object.keys(d).sort()).toEqual(['ep', 'id', 'kind', 'name', 'reason', 'software', 'status'])
      if (d.status === 'ready') expect(d.reason).toBeNull()
      else expect(d.reason).toMatch(/\S/)
    }
  })

  it('probes once per launch: a second call answers from the cached discovery', async () => {
    // the discovery the first call started (probe child processes) is the one every later call awaits
    const discovery = f.app.devices.devices()
    expect(await f.ok<DeviceView[]>('devices:list')).toEqual(devices)
    expect(f.app.devices.devices()).toBe(discovery)
    expect(await f.app.devices.devices()).toBe(await discovery)
  })
})

describe('placement', () => {
  it('defaults to CPU only, resolved for the default model with op groups for the editor', async () => {
    const view = await f.ok<PlacementView>('devices:placement')
    expect(view.setting).toEqual({ preset: 'cpu' })
    expect(view.resolved).toMatchObject({ version: 1, name: 'CPU only', phases: { prefill: { device: 'cpu' }, decode: { device: 'cpu' } } })
    expect(view.predicted).toBeNull()
    expect(view.opGroups).toEqual(expect.arrayContaining(['attn-norm', 'qkv', 'attention', 'ffn', 'final-norm', 'lm-head']))
    expect(view.matmulGroups).toEqual(['qkv', 'attn-out', 'ffn', 'lm-head'])
    // the one default chunk, the one that runs: the CPU preset resolves to it, and the editor starts from it
    expect(view.prefillChunk.defaultTokens).toBe(DEFAULT_PREFILL_CHUNK_TOKENS)
    expect(view.resolved?.prefillChunkTokens).toBe(view.prefillChunk.defaultTokens)
    expect(view.prefillChunk.maxTokens).toBeGreaterThan(view.prefillChunk.defaultTokens)
  })

  it('resolves the GPU preset to the software GPU when it is ready, and explains a fallback when not', async () => {
    const view = await f.ok<PlacementView>('devices:setPlacement', { preset: 'gpu' })
    expect(view.setting).toEqual({ preset: 'gpu' })
    if (ready('webgpu-0')) expect(view.resolved?.phases.decode.device).toBe('webgpu-0')
    else expect(view.explanation).toMatch(/no GPU found/i)
  })

  it('resolves the tensor split into matmul partitions between two devices', async () => {
    const view = await f.ok<PlacementView>('devices:setPlacement', { preset: 'tensor-split' })
    const partitions = view.resolved?.phases.decode.partitions ?? []
    expect(partitions.length).toBeGreaterThan(0)
    for (const p of partitions) expect(p.devices[0]).not.toBe(p.devices[1])
  })

  it('says honestly that Auto has not measured the devices yet', async () => {
    const view = await f.ok<PlacementView>('devices:setPlacement', { preset: 'auto' })
    expect(view.explanation).toMatch(/not profiled yet/)
    expect(view.predicted).toBeNull()
    expect(view.resolved?.phases.decode.device).toBe('cpu')
  })

  it('accepts a custom placement the model and devices can run, and stores it', async () => {
    const layerSplit = (await f.ok<PlacementView>('devices:setPlacement', { preset: 'layer-split' })).resolved
    if (layerSplit === null) throw new Error('the layer split did not resolve')
    const custom: PlacementJson = { ...layerSplit, name: 'mine' }
    const view = await f.ok<PlacementView>('devices:setPlacement', { preset: 'custom', placement: custom })
    expect(view.setting).toEqual({ preset: 'custom', placement: custom })
    expect(view.resolved).toEqual(custom)
  })

  it('solves Auto from a stored device profile, with its explanation and predicted speed', async () => {
    const probed = await f.app.devices.devices()
    const gpu = probed.find((d) => d.id === 'webgpu-0' && d.status === 'ready')
    const model = await loadModel(MODEL())
    if (model.weights === null) throw new Error('no weights')
    const keys = profileCacheKeys({ config: model.config, weights: model.weights }, probed)
    // measured-looking times in which the software GPU is far faster than both CPU workers
    const profile: Profile = {
      version: 1,
      modelShape: modelShapeKey(model.config),
      devices: probed
        .filter((d) => d.status === 'ready')
        .map((d) => ({
          device: d.id,
          runOverheadMs: 0.01,
          groups: OP_GROUP_NAMES.map((group) => ({ group, samples: [{ tokens: 1, ms: d === gpu ? 0.001 : 0.5 }, { tokens: 256, ms: d === gpu ? 0.01 : 50 }] }))
        })),
      links: [],
      defaultLink: { fixedMs: 0.001, msPerMiB: 0.01 }
    }
    f.app.store.deviceProfiles.put(keys.deviceKey, keys.shapeKey, profile)
    f.app.store.settings.delete('placement')
    // a fresh app: nothing about this model is known in memory, so the view reads the stored profile
    await f.dispose()
    f = appFixture({ dir: scratch.dir })
    const view = await f.ok<PlacementView>('devices:setPlacement', { preset: 'auto' })
    expect(view.explanation, view.explanation ?? '').not.toMatch(/not profiled yet|cannot|could not/)
    expect(view.predicted?.decodeTokensPerSec).toBeGreaterThan(0)
    expect(view.predicted?.prefillTokensPerSec).toBeGreaterThan(0)
    if (gpu !== undefined) expect(view.resolved?.phases.decode.device).toBe('webgpu-0')
    f.app.store.deviceProfiles.delete(keys.deviceKey, keys.shapeKey)
    await f.ok('devices:setPlacement', { preset: 'tensor-split' })
  })

  it('remembers a failed measurement and says why Auto runs on the CPU', async () => {
    const auto = new AutoProfiles(f.app.store)
    const entry = await f.app.models.pick(MODEL())
    const none: DeviceInfo[] = (await f.app.devices.devices()).map((d) => ({ ...d, status: 'failed', reason: 'test' }))
    let closed = 0
    const outcome = await auto.ensure(entry, none, async () => {
      closed++
    })
    expect(outcome).toEqual({ profile: null, failure: expect.stringMatching(/no ready device/) })
    expect(await auto.ensure(entry, none, async () => void closed++)).toEqual(outcome)
    expect(closed).toBe(1)
  })

  it('keeps the choice across app re-creation (SQLite settings)', async () => {
    const before = await f.ok<PlacementView>('devices:placement')
    await f.dispose()
    f = appFixture({ dir: scratch.dir })
    const after = await f.ok<PlacementView>('devices:placement')
    expect(after.setting).toEqual(before.setting)
    expect(after.resolved).toEqual(before.resolved)
  })
})

/** A valid custom placement on the CPU, with `patch` applied to its prefill phase. */
function cpuPlacement(prefill: Record<string, unknown> = {}): Record<string, unknown> {
  const phase = { device: 'cpu', groups: [], partitions: [] }
  return { version: 1, name: 'p', prefillChunkTokens: 16, phases: { prefill: { ...phase, ...prefill }, decode: phase } }
}

describe('invalid input', () => {
  const BAD: Array<[string, unknown[], RegExp]> = [
    ['devices:usage', [], /arguments: expected 1 entry, got 0/],
    ['devices:usage', [-1], /sinceMs: -1 is out of range/],
    ['devices:usage', [Infinity], /sinceMs: expected a finite number/],
    ['devices:usage', ['0'], /sinceMs: expected a finite number/],
    ['devices:list', [1], /arguments: expected 0 entries, got 1/],
    ['devices:setPlacement', [{ preset: 'warp' }], /setting\.preset: "warp" is not one of cpu, gpu/],
    ['devices:setPlacement', [{ preset: 'cpu', placement: cpuPlacement() }], /unknown field "placement"/],
    ['devices:setPlacement', [{ preset: 'custom' }], /setting: missing field "placement"/],
    ['devices:setPlacement', [{ preset: 'custom', placement: { ...cpuPlacement(), version: 2 } }], /setting\.placement\.version: 2 is not supported \(this build reads version 1\)/],
    ['devices:setPlacement', [{ preset: 'custom', placement: { ...cpuPlacement(), phases: {} } }], /setting\.placement\.phases: missing field "prefill"/],
    ['devices:setPlacement', [{ preset: 'custom', placement: cpuPlacement({ groups: [{ layer: 'all', group: 'mlp', device: 'cpu' }] }) }], /setting\.placement\.phases\.prefill\.groups\[0\]\.group: "mlp" is not one of attn-norm/],
    [
      'devices:setPlacement',
      [{ preset: 'custom', placement: cpuPlacement({ partitions: [{ layer: 'all', group: 'ffn', by: 'rows', devices: ['cpu', 'cpu-2'], ratio: 1 }] }) }],
      /setting\.placement\.phases\.prefill\.partitions\[0\]\.ratio: 1 is out of range \(0, 1\)/
    ],
    [
      'devices:setPlacement',
      [{ preset: 'custom', placement: cpuPlacement({ partitions: [{ layer: 'all', group: 'ffn', by: 'sequence', devices: ['cpu', 'cpu-2'], standardLength: 16 }] }) }],
      /setting\.placement\.phases\.prefill\.partitions\[0\]\.standardLength: 16 is out of range \[1, 15\]/
    ],
    // structurally fine, but not for this model and these devices (checked by the engine's parsePlacement)
    ['devices:setPlacement', [{ preset: 'custom', placement: cpuPlacement({ device: 'npu-9' }) }], /cannot run stories260K.gguf on this machine: .*unknown device "npu-9"/],
    ['devices:setPlacement', [{ preset: 'custom', placement: cpuPlacement({ groups: [{ layer: 99, group: 'qkv', device: 'cpu' }] }) }], /cannot run stories260K.gguf/],
    ['devices:addProviderLibrary', ['openvino', '/opt/ov/libopenvino_provider.so'], /arguments: expected 3 entries, got 2/],
    ['devices:addProviderLibrary', ['openvino', '/opt/ov/libopenvino_provider.so', ['device_type=NPU']], /options must be an object of strings/],
    ['devices:addProviderLibrary', ['openvino', '/opt/ov/libopenvino_provider.so', { 'device type': 'NPU' }], /options: option names are 1–64 letters/],
    ['devices:addProviderLibrary', ['openvino', '/opt/ov/libopenvino_provider.so', { device_type: 7 }], /options\.device_type/],
    ['devices:addProviderLibrary', ['openvino', '/opt/ov/libopenvino_provider.so', Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v']))], /at most 32 options/]
  ]
  it.each(BAD)('%s %j is a ValidationError that names the problem', async (channel, args, message) => {
    const outcome = await f.call(channel, ...args)
    expect(outcome).toMatchObject({ ok: false, error: { name: 'ValidationError', message: expect.stringMatching(message) } })
  })

  it('refuses a placement larger than the limit, and leaves the stored choice alone', async () => {
    const before = await f.ok<PlacementView>('devices:placement')
    const device = 'd'.repeat(64)
    const groups = Array.from({ length: 10_000 }, () => ({ layer: 'all', group: 'attention', device }))
    const outcome = await f.call('devices:setPlacement', { preset: 'custom', placement: cpuPlacement({ groups, partitions: [] }) })
    expect(outcome).toMatchObject({ ok: false, error: { name: 'ValidationError', message: expect.stringMatching(`limit is ${API_LIMITS.maxPlacementChars}`) } })
    expect((await f.ok<PlacementView>('devices:placement')).setting).toEqual(before.setting)
  })
})
