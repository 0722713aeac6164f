/**
 * @file One measurement of the NPU path in a process of its own (its RSS and the virtual NPU's counters are
 * the measurement's alone), for bench/npu.ts. argv[2] is the JSON request; the last stdout line is the JSON result.
 *
 *   open:    opens the model with the "prefill on NPU" placement on the virtual NPU (device workers, the graph
 *            cache and the EP-context cache in `cacheDir`): setup time and the NPU's compile counters.
 *   memory:  opens each of the NPU's prefill graphs (those `open` opened) `copies` times (a graph per chunk
 *            position) or once (the chunk-sharing graph) and reports the process's RSS before and after.
 *   prefill: times the prefill of `promptTokens` tokens, with and without the placement, with the NPU's busy and
 *            modelled time.
 *   schedule: llm.npu's scheduling rows: prefill of each of `promptTokens` on the NPU placement (device workers,
 *            in this process) with float, W8A8 and W8A8 + shadow matmuls, chunks in order and out of order, with
 *            the NPU's idle share; next to CPU only and Auto (profiled here).
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { createDeviceSession, discoverDevices, EP_CONTEXT_DIR, discoverEpDevices, VIRTUAL_NPU_EP, virtualNpuStats, type DeviceInfo, type OrtSession, type VirtualNpuStats } from '../main/engine/devices'
import { calibrate, DEFAULT_SHADOW_PRUNED_PERCENT, loadModel, readWeights, shadowLayers } from '../main/engine/model'
import { buildPreset, weightInfoOfTypes, type Placement } from '../main/engine/plan'
import { DeviceWorkersEngine, openModelWorker, profileDevices, SCHEDULE_ORDERS, usageDelta, type ModelWorkerClient, type ScheduleOrder, type ShadowLayers } from '../main/engine/runtime'
import { argmax } from './peer-tandem'

/** What the parent asks for. */
export type NpuChildRequest =
  | { readonly mode: 'open'; readonly model: string; readonly chunk: number; readonly cacheDir: string; readonly npuOptions: Record<string, string> }
  | { readonly mode: 'memory'; readonly model: string; readonly chunk: number; readonly cacheDir: string; readonly npuOptions: Record<string, string>; readonly copies: number }
  | { readonly mode: 'prefill'; readonly model: string; readonly chunk: number; readonly cacheDir: string; readonly npuOptions: Record<string, string>; readonly promptTokens: number; readonly reps: number }
  | {
      readonly mode: 'schedule'
      readonly model: string
      readonly chunk: number
      readonly cacheDir: string
      readonly npuOptions: Record<string, string>
      readonly promptTokens: readonly number[]
      readonly reps: number
      /** corpus tokens the W8A8 calibration runs through the reference forward */
      readonly calibrationTokens: number
    }

/** One row of the scheduling table. */
export interface ScheduleRow {
  readonly promptTokens: number
  /** 'cpu' | 'auto' | 'npu' */
  readonly placement: string
  /** 'float' | 'w8a8' | 'w8a8-shadow' */
  readonly matmuls: string
  /** shadow segments' layers (w8a8-shadow), of all layers */
  readonly shadowLayers: number
  readonly order: ScheduleOrder | null
  readonly ms: readonly number[]
  /** per prefill: each device's busy ms */
  readonly busyMs: Readonly<Record<string, number>>
  /** per prefill: 1 − the NPU's busy time ÷ the prefill's wall time (null without an NPU) */
  readonly npuIdleShare: number | null
}

const MIB = 1024 * 1024
const CONTEXT = 1024

const request = JSON.parse(process.argv[2] ?? '{}') as NpuChildRequest

async function devicesWithNpu(options: Record<string, string>): Promise<{ devices: DeviceInfo[]; npu: DeviceInfo; libraryPath: string }> {
  const cpu = (await discoverDevices({ probe: false })).filter((d) => d.id === 'cpu')
  const ep = await discoverEpDevices({ virtualNpu: true, virtualNpuOptions: options })
  const npu = ep.devices.find((d) => d.ep === VIRTUAL_NPU_EP)
  const lib = ep.libraries.find((l) => l.ok && l.eps.includes(VIRTUAL_NPU_EP))
  if (npu === undefined || lib === undefined || npu.status !== 'ready') throw new Error(`the virtual NPU is not ready: ${npu?.reason ?? lib?.reason ?? 'not listed'}`)
  return { devices: [...cpu.map((d) => ({ ...d, status: 'ready' as const, reason: null })), ...ep.devices], npu, libraryPath: lib.path }
}

function npuPlacement(model: Awaited<ReturnType<typeof loadModel>>, devices: readonly DeviceInfo[], chunk: number): Placement {
  return buildPreset('npu-prefill-gpu-decode', model.config, devices, { prefillChunkTokens: chunk, weights: weightInfoOfTypes(model.tensorTypes) }).placement
}

function statsDelta(a: VirtualNpuStats, b: VirtualNpuStats): Record<string, number> {
  return {
    graphsCompiled: b.graphsCompiled - a.graphsCompiled,
    graphRuns: b.graphRuns - a.graphRuns,
    busyMs: b.busyMs - a.busyMs,
    modelledMs: b.modelledMs - a.modelledMs,
    modelledCompileMs: b.modelledCompileMs - a.modelledCompileMs,
    contextBlobsWritten: b.contextBlobsWritten - a.contextBlobsWritten,
    contextBlobsLoaded: b.contextBlobsLoaded - a.contextBlobsLoaded
  }
}

async function open(r: Extract<NpuChildRequest, { mode: 'open' }>): Promise<unknown> {
  const model = await loadModel(r.model, { weights: false })
  const { devices, libraryPath } = await devicesWithNpu(r.npuOptions)
  const before = virtualNpuStats(libraryPath)
  const t0 = performance.now()
  const runner = await openModelWorker(model, { placement: npuPlacement(model, devices, r.chunk), devices, maxContext: CONTEXT, cacheDir: r.cacheDir })
  const openMs = performance.now() - t0
  await runner.dispose()
  return { openMs, npu: statsDelta(before, virtualNpuStats(libraryPath)) }
}

/**
 * The NPU's prefill graphs as the device workers opened them: `open` ran first, and each graph it opened on the
 * NPU has an EP-context entry named after it (ep-context-cache.ts).
 */
async function memory(r: Extract<NpuChildRequest, { mode: 'memory' }>): Promise<unknown> {
  const { npu } = await devicesWithNpu(r.npuOptions)
  const graphs = [...new Set(readdirSync(join(r.cacheDir, EP_CONTEXT_DIR)).map((entry) => entry.split('-')[0]))]
  const paths = graphs.map((key) => join(r.cacheDir, `${key}.onnx`))
  global.gc?.()
  const rss0 = process.memoryUsage.rss()
  const sessions: OrtSession[] = []
  const t0 = performance.now()
  for (let copy = 0; copy < r.copies; copy++) {
    for (const path of paths) sessions.push(await createDeviceSession(path, { ep: npu.ep, cpuFallback: false, intraOpThreads: 1, providerOptions: npu.providerOptions }))
  }
  const openMs = performance.now() - t0
  global.gc?.()
  const rss1 = process.memoryUsage.rss()
  for (const s of sessions) await s.release()
  return { graphs: paths.length, sessions: sessions.length, openMs, rssBeforeMiB: rss0 / MIB, rssAfterMiB: rss1 / MIB, graphMiB: (rss1 - rss0) / MIB }
}

/** A warm-up prefill (`afterWarmUp` runs then), then `reps` timed ones. */
async function timePrefill(runner: ModelWorkerClient, prompt: readonly number[], reps: number, afterWarmUp: () => void = () => {}): Promise<{ ms: number[]; busy: ReturnType<typeof usageDelta>; first: number }> {
  await runner.forward(prompt, 0)
  afterWarmUp()
  const ms: number[] = []
  const before = runner.usage()
  let first = -1
  for (let i = 0; i < reps; i++) {
    await runner.truncate(0)
    const t0 = performance.now()
    first = argmax(await runner.forward(prompt, 0))
    ms.push(performance.now() - t0)
  }
  return { ms, busy: usageDelta(before, runner.usage()), first }
}

async function prefill(r: Extract<NpuChildRequest, { mode: 'prefill' }>): Promise<unknown> {
  const model = await loadModel(r.model, { weights: false })
  const { devices, libraryPath } = await devicesWithNpu(r.npuOptions)
  const prompt = Array.from({ length: r.promptTokens }, (_, i) => 100 + ((i * 7919) % (model.config.vocabSize - 200)))
  const cpu = await openModelWorker(model, { maxContext: CONTEXT, cacheDir: r.cacheDir })
  const cpuRun = await timePrefill(cpu, prompt, r.reps)
  await cpu.dispose()
  const runner = await openModelWorker(model, { placement: npuPlacement(model, devices, r.chunk), devices, maxContext: CONTEXT, cacheDir: r.cacheDir })
  let before = virtualNpuStats(libraryPath)
  const npuRun = await timePrefill(runner, prompt, r.reps, () => {
    before = virtualNpuStats(libraryPath)
  })
  // the NPU's counters over the timed prefills, per prefill
  const npu = Object.fromEntries(Object.entries(statsDelta(before, virtualNpuStats(libraryPath))).map(([k, v]) => [k, v / r.reps]))
  await runner.dispose()
  return { cpu: cpuRun, npuPlacement: { ...npuRun, npu } }
}

/** A deterministic prompt of `n` ids inside the vocabulary. */
function promptOf(n: number, vocabSize: number): number[] {
  return Array.from({ length: n }, (_, i) => 100 + ((i * 7919) % (vocabSize - 200)))
}

async function schedule(r: Extract<NpuChildRequest, { mode: 'schedule' }>): Promise<unknown> {
  const header = await loadModel(r.model, { weights: false })
  const model = { config: header.config, weights: readWeights(header.layout) }
  const { devices, npu } = await devicesWithNpu(r.npuOptions)
  const contextLength = Math.max(...r.promptTokens)
  const rows: ScheduleRow[] = []
  const cpu = await openModelWorker(header, { maxContext: contextLength, cacheDir: r.cacheDir })
  for (const n of r.promptTokens) {
    const run = await timePrefill(cpu, promptOf(n, header.config.vocabSize), r.reps)
    rows.push({ promptTokens: n, placement: 'cpu', matmuls: 'float', shadowLayers: 0, order: null, ms: run.ms, busyMs: perPrefill(run.busy, r.reps), npuIdleShare: null })
  }
  await cpu.dispose()

  const calibration = calibrate(model, [[1, ...promptOf(r.calibrationTokens - 1, header.config.vocabSize)]])
  const scales = Object.fromEntries(Object.entries(calibration.matmuls).map(([name, m]) => [name, m.scale]))
  const hot = Object.fromEntries(Object.entries(calibration.matmuls).map(([name, m]) => [name, m.hotChannels]))
  const shadow = (pruned: number): ShadowLayers => ({ layers: shadowLayers(calibration, pruned), hot })
  const weights = weightInfoOfTypes(header.tensorTypes)
  const profile = await profileDevices(model, devices, { prefillChunkTokens: r.chunk })
  const auto = buildPreset('auto', header.config, devices, { weights, prefillChunkTokens: r.chunk, profile }).placement
  // Auto as users get it: the model worker picks the engine (the single CPU session when Auto keeps everything there)
  const autoRunner = await openModelWorker(header, { placement: auto, devices, maxContext: contextLength, cacheDir: r.cacheDir })
  for (const n of r.promptTokens) {
    const run = await timePrefill(autoRunner, promptOf(n, header.config.vocabSize), r.reps)
    const busyMs = perPrefill(run.busy, r.reps)
    const wall = run.ms.reduce((a, b) => a + b, 0) / run.ms.length
    rows.push({ promptTokens: n, placement: 'auto', matmuls: 'float', shadowLayers: 0, order: 'out-of-order', ms: run.ms, busyMs, npuIdleShare: busyMs[npu.id] === undefined ? null : Math.max(0, 1 - busyMs[npu.id] / wall) })
  }
  await autoRunner.dispose()
  const configs: Array<{ placement: string; plan: Placement; matmuls: string; shadow: ShadowLayers | null; orders: readonly ScheduleOrder[] }> = [
    { placement: 'npu', plan: npuPlacement(header, devices, r.chunk), matmuls: 'float', shadow: null, orders: SCHEDULE_ORDERS },
    { placement: 'npu', plan: npuPlacement(header, devices, r.chunk), matmuls: 'w8a8', shadow: null, orders: SCHEDULE_ORDERS },
    { placement: 'npu', plan: npuPlacement(header, devices, r.chunk), matmuls: 'w8a8-shadow', shadow: shadow(DEFAULT_SHADOW_PRUNED_PERCENT), orders: SCHEDULE_ORDERS },
    { placement: 'npu', plan: npuPlacement(header, devices, r.chunk), matmuls: 'w8a8-shadow', shadow: shadow(0), orders: SCHEDULE_ORDERS }
  ]
  for (const c of configs) {
    for (const order of c.orders) {
      const engine = await DeviceWorkersEngine.create(model, c.plan, {
        contextLength,
        devices,
        graph: { ropeTableLength: contextLength, w8a8: c.matmuls === 'float' ? null : scales },
        cacheDir: r.cacheDir,
        order,
        shadow: c.shadow
      })
      try {
        for (const n of r.promptTokens) {
          const prompt = promptOf(n, header.config.vocabSize)
          await engine.forward(prompt, 0)
          const ms: number[] = []
          const before = engine.usage()
          for (let i = 0; i < r.reps; i++) {
            engine.truncate(0)
            const t0 = performance.now()
            await engine.forward(prompt, 0)
            ms.push(performance.now() - t0)
          }
          const busyMs = perPrefill(usageDelta(before, engine.usage()), r.reps)
          const wall = ms.reduce((a, b) => a + b, 0) / ms.length
          const npuBusy = busyMs[npu.id]
          rows.push({ promptTokens: n, placement: c.placement, matmuls: c.matmuls, shadowLayers: c.shadow?.layers.size ?? 0, order, ms, busyMs, npuIdleShare: npuBusy === undefined ? null : Math.max(0, 1 - npuBusy / wall) })
        }
      } finally {
        await engine.dispose()
      }
    }
  }
  return { rows, layers: header.config.nLayers, autoDevices: [...new Set(Object.values(auto.phases).flatMap((p) => [p.device, ...p.groups.map((g) => g.device)]))] }
}

/** Busy ms per device, divided by the prefills they were summed over. */
function perPrefill(devices: ReadonlyArray<{ id: string; busyMs: number }>, reps: number): Record<string, number> {
  return Object.fromEntries(devices.map((d) => [d.id, d.busyMs / reps]))
}

const handlers = { open, memory, prefill, schedule } as const
const result = await handlers[request.mode](request as never)
console.log(JSON.stringify(result))
