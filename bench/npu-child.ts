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
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { createDeviceSession, discoverDevices, EP_CONTEXT_DIR, discoverEpDevices, VIRTUAL_NPU_EP, virtualNpuStats, type DeviceInfo, type OrtSession, type VirtualNpuStats } from '../main/engine/devices'
import { loadModel } from '../main/engine/model'
import { buildPreset, weightInfoOfTypes, type Placement } from '../main/engine/plan'
import { openModelWorker, usageDelta, type ModelWorkerClient } from '../main/engine/runtime'
import { argmax } from './peer-tandem'

/** What the parent asks for. */
export type NpuChildRequest =
  | { readonly mode: 'open'; readonly model: string; readonly chunk: number; readonly cacheDir: string; readonly npuOptions: Record<string, string> }
  | { readonly mode: 'memory'; readonly model: string; readonly chunk: number; readonly cacheDir: string; readonly npuOptions: Record<string, string>; readonly copies: number }
  | { readonly mode: 'prefill'; readonly model: string; readonly chunk: number; readonly cacheDir: string; readonly npuOptions: Record<string, string>; readonly promptTokens: number; readonly reps: number }

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

const handlers = { open, memory, prefill } as const
const result = await handlers[request.mode](request as never)
console.log(JSON.stringify(result))
