/**
 * @file `npm run bench`: Tandem against llama.cpp (node-llama-cpp, CPU backend) on the same GGUF files,
 * with this machine's memory-bandwidth and MatMul ceilings measured in the same run, then the Placements
 * section (every preset and Auto on this machine's devices, the hand-off latency; bench/placements.ts). Writes
 * bench/results/<date>.json (every rep) and <date>.md (the table, also printed). Progress goes to stderr.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { cpus, loadavg, release, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseBenchArgs, type BenchArgs } from './args'
import { runLimitsChild } from './child-handle'
import { summarizeGguf } from './gguf-summary'
import { longContextCheck, renderLongContext, type LongContextRecord } from './long-context'
import { ensureBenchModel, isLargeBenchModel, type BenchModelFile } from './models'
import { ensurePeers, peerPackageVersion } from './peers-install'
import type { LimitSamples } from './protocol'
import { benchmarkNpuPath, renderNpuPath, type NpuRecord } from './npu'
import { benchmarkNpuSchedule, renderNpuSchedule, type NpuScheduleRecord } from './npu-schedule'
import { benchmarkKvSnapshots, renderKvSnapshots, type KvSnapshotRecord } from './kv-snapshots'
import { benchmarkSummaries, renderSummaries, type SummaryBenchRecord } from './summaries'
import { benchmarkPlacements, type PlacementsRecord } from './placements'
import { renderPlacementsMarkdown, summarizePlacements } from './placements-report'
import { combineLimits, modelRows, renderMarkdown } from './report'
import { benchmarkModel, CONTEXT_SIZE, errorLine, LLAMA_BATCH_SIZE, type ModelRecord } from './schedule'

const BENCH_DIR = dirname(fileURLToPath(import.meta.url))
const PEERS_DIR = join(BENCH_DIR, 'peers')
const MODELS_DIR = join(BENCH_DIR, '.models')
/** Thread counts every peer is tried with on the small models (this machine class has 2 cores). */
const THREAD_COUNTS = [1, 2]
/** Models of 1B+ parameters run each peer on all cores only (see isLargeBenchModel). */
const LARGE_MODEL_THREADS = [cpus().length]
/** The limits probes: a 512 MiB float32 buffer and a 1024×4096·4096×4096 MatMul (34 GFLOP). */
const LIMITS = { bandwidthBytes: 512 * 2 ** 20, matmul: [1024, 4096, 4096] as const, reps: 5 }
const LIMITS_QUICK = { ...LIMITS, reps: 2 }

/** Graph-cache folders of interrupted runs older than this are removed (each holds up to ~0.5 GB per model). */
const STALE_GRAPH_CACHE_MS = 60 * 60 * 1000

const log = (line: string): void => {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`)
}

const loadLine = (): string => loadavg().map((x) => x.toFixed(1)).join(' ')

async function measureLimits(quick: boolean, when: string): Promise<{ samples: readonly LimitSamples[]; ortVersion: string }> {
  log(`measuring machine limits (${when})`)
  const cfg = quick ? LIMITS_QUICK : LIMITS
  const r = await runLimitsChild({ role: 'limits', bandwidthBytes: cfg.bandwidthBytes, matmul: cfg.matmul, threadCounts: THREAD_COUNTS, reps: cfg.reps })
  for (const s of r.samples) {
    const best = (v: readonly number[]): string => Math.max(...v).toFixed(1)
    log(`  ${s.threads} thread(s): best ${best(s.bandwidthGBs)} GB/s ReduceSum, ${best(s.readLoopGBs)} GB/s read loop, ${best(s.matmulGflops)} GFLOP/s MatMul`)
  }
  return r
}

/** Removes graph-cache folders left by runs that were killed before their cleanup. */
async function removeStaleGraphCaches(): Promise<void> {
  if (!existsSync(MODELS_DIR)) return
  for (const name of await readdir(MODELS_DIR)) {
    if (!name.startsWith('graphs-')) continue
    const path = join(MODELS_DIR, name)
    if (Date.now() - (await stat(path)).mtimeMs > STALE_GRAPH_CACHE_MS) await rm(path, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2))
  if (args.onlyPlacements) return placementsOnly(args)
  if (args.onlyLongContext) return longContextOnly(args)
  if (args.onlyVirtualNpu) return virtualNpuOnly(args)
  if (args.onlyNpuSchedule) return npuScheduleOnly(args)
  if (args.onlyKvSnapshots) return kvSnapshotsOnly(args)
  if (args.onlySummaries) return summariesOnly(args)
  const started = new Date()
  const loadAtStart = loadLine()
  log(`models ${args.models.join(', ')}; ${args.reps} rep(s), ${args.probeRounds} probe round(s); placements ${args.placements ? 'on' : 'off'}; load average ${loadAtStart}`)
  await ensurePeers(PEERS_DIR, log)

  const files: BenchModelFile[] = []
  for (const id of args.models) files.push(await ensureBenchModel(id, MODELS_DIR, log))
  await mkdir(MODELS_DIR, { recursive: true })
  await removeStaleGraphCaches()
  // a fresh graph cache per run: the first Tandem load of each model compiles, the second is a cache hit
  const graphCacheDir = await mkdtemp(join(MODELS_DIR, 'graphs-'))
  const records: ModelRecord[] = []
  let limitsStart: Awaited<ReturnType<typeof measureLimits>>
  let limitsEnd: Awaited<ReturnType<typeof measureLimits>>
  let placements: PlacementsRecord | null = null
  let longContext: LongContextRecord | null = null
  let npuPath: NpuRecord | null = null
  const skipped: string[] = []
  try {
    limitsStart = await measureLimits(args.quick, 'start')
    for (const model of files) {
      log(`${model.label}: ${model.path} (${(model.sizeBytes / 1e9).toFixed(2)} GB)`)
      const large = isLargeBenchModel(model.id)
      try {
        const summary = await summarizeGguf(model.path)
        records.push(
          await benchmarkModel(model, summary, {
            reps: args.reps,
            // one thread count: the probe is only the warm-up
            probeRounds: large ? 1 : args.probeRounds,
            threadCounts: large ? LARGE_MODEL_THREADS : THREAD_COUNTS,
            graphCacheDir,
            peersDir: PEERS_DIR,
            log
          })
        )
      } catch (e) {
        skipped.push(`${model.label}: ${errorLine(e)}`)
        log(`  skipped: ${errorLine(e)}`)
      }
    }
    limitsEnd = await measureLimits(args.quick, 'end')
    // after the end limits and before placements, on the graph cache the model table warmed
    if (args.longContext) longContext = await runLongContext(graphCacheDir)
    // after the end limits, so the model table's machine figures are the same as without this section
    if (args.placements) placements = await runPlacements(args, graphCacheDir)
    if (args.virtualNpu) npuPath = await benchmarkNpuPath({ modelsDir: MODELS_DIR, reps: args.reps, log })
  } finally {
    await rm(graphCacheDir, { recursive: true, force: true })
  }
  const finished = new Date()
  const limits = combineLimits([limitsStart.samples, limitsEnd.samples])
  const rows = records.flatMap((r) => modelRows(r, limits))

  const llamaDetails = records.flatMap((r) => r.loads).find((l) => l.peer === 'llama.cpp')?.details ?? {}
  const largeLabels = records.filter((r) => isLargeBenchModel(r.model.id)).map((r) => r.model.label)
  const versions = {
    node: process.version,
    onnxruntimeNode: limitsStart.ortVersion,
    nodeLlamaCpp: await peerPackageVersion(PEERS_DIR, 'node-llama-cpp'),
    llamaCppRelease: String(llamaDetails.llamaCppRelease ?? 'unknown'),
    transformersJs: await peerPackageVersion(PEERS_DIR, '@huggingface/transformers')
  }
  const cpu = cpus()
  const machine = { cpuModel: cpu[0]?.model ?? 'unknown', cores: cpu.length, totalMemBytes: totalmem(), kernel: release(), loadAverageStart: loadAtStart, loadAverageEnd: loadLine() }
  const minutes = (finished.getTime() - started.getTime()) / 60000
  const machineLine =
    `${machine.cpuModel}, ${machine.cores} cores, ${Math.round(machine.totalMemBytes / 2 ** 30)} GiB; Node ${versions.node}, onnxruntime-node ${versions.onnxruntimeNode}, ` +
    `node-llama-cpp ${versions.nodeLlamaCpp} (llama.cpp ${versions.llamaCppRelease}, CPU backend, flash attention ${String(llamaDetails.flashAttention ?? '?')}). ` +
    `Run ${started.toISOString().slice(0, 16)}Z, ${minutes.toFixed(1)} min, ${args.reps} rep(s) per phase; load average ${machine.loadAverageStart} at start, ${machine.loadAverageEnd} at end.`
  const decodeAgreement = rows
    .filter((r) => r.kind === 'decode')
    .map((r) => `${r.label} ${r.phase} ${r.agreeingTokens}/${r.steps}`)
    .join(', ')
  const disagreements = rows.filter((r) => r.kind === 'prefill' && r.agreeingTokens === 0).map((r) => `${r.label} ${r.phase}`)
  const notes = [
    'Same GGUF file for both peers; prompts are fixed seeded token ids (normal tokens only), fed as ids (the random models have a synthetic tokenizer).',
    'Prefill: tokens from an empty cache until the first greedy token (this is the TTFT). Decode: 128 greedy single-token steps after a ' +
      '16-token (short) or 1,024-token context that was prefilled untimed. Tandem: openModelWorker forward + argmax in JS; llama.cpp: ' +
      `LlamaContextSequence.evaluate, temperature 0, batch ${LLAMA_BATCH_SIZE}, context ${CONTEXT_SIZE}.`,
    'Thread choice: a probe pass (the discarded warm-up) runs every phase on 1 and 2 threads per peer; the faster (best probe run) is used. ' +
      'Decode at 1,024 uses the thread count that won the short-context decode probe. ' +
      (largeLabels.length === 0
        ? ''
        : `The 1B+ models (${largeLabels.join(', ')}) run each peer on ${LARGE_MODEL_THREADS[0]} threads only (one probe round as warm-up), so two copies of the model are in memory at a time rather than four.`),
    ...(skipped.length === 0 ? [] : [`Not benchmarked: ${skipped.join('; ')}.`]),
    'Decode % of limit counts weight bytes only (all matrices + output head, as stored in the GGUF); the KV cache read at 1,024 context is extra.',
    `Greedy first token of the prefill rows differs between the peers on: ${disagreements.length === 0 ? 'none' : disagreements.join(', ')}. ` +
      `Decode steps with identical greedy tokens from the start (numerics differ slightly; quantized dot products differ more): ${decodeAgreement}.`,
    `transformers.js (${versions.transformersJs ?? 'not installed'}): not run. It loads only ONNX exports (onnx/model.onnx + config.json made by ` +
      'Optimum from a PyTorch checkpoint) and has no GGUF reader, so it cannot load these weights; an export of the same random weights would ' +
      'need our own ONNX exporter in its I/O layout, i.e. a different file and a third engine, not the same weights.'
  ]
  const date = started.toISOString().slice(0, 10)
  const base = args.quick ? `${date}-quick` : date
  const placementsSummary = placements === null ? null : summarizePlacements(placements)
  const markdown =
    renderMarkdown({
      title: `Tandem vs llama.cpp, CPU (${base})`,
      rows,
      models: records,
      limits,
      machineLine,
      notes,
      extraSections: longContext === null ? [] : [renderLongContext(longContext)]
    }) +
    (placements === null || placementsSummary === null ? '' : `\n${renderPlacementsMarkdown(placements, placementsSummary)}`) +
    (npuPath === null ? '' : `\n${renderNpuPath(npuPath)}\n`)
  const json = {
    schema: 1,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    args,
    machine,
    versions,
    limits: { ...limits, samples: { start: limitsStart.samples, end: limitsEnd.samples } },
    models: records.map((r) => ({
      id: r.model.id,
      label: r.model.label,
      path: r.model.path,
      sizeBytes: r.model.sizeBytes,
      generatedMs: r.model.generatedMs,
      generatedNow: r.model.generatedNow,
      summary: { ...r.summary, normalTokenIds: r.summary.normalTokenIds.length },
      coldLoad: r.coldLoad,
      loads: r.loads,
      errors: r.errors,
      wallMs: r.wallMs
    })),
    rows,
    notes,
    longContext,
    placements: placements === null ? null : { record: placements, summary: placementsSummary },
    npuPath
  }
  await writeResults(resolve(args.outDir ?? join(BENCH_DIR, 'results')), base, json, markdown)
  log(`done in ${minutes.toFixed(1)} min`)
}

/** The Placements section on stories260K (see bench/placements.ts). */
async function runPlacements(args: BenchArgs, graphCacheDir: string): Promise<PlacementsRecord> {
  const model = await ensureBenchModel('stories260k', MODELS_DIR, log)
  log(`placements: ${model.label}: ${model.path}`)
  return benchmarkPlacements({ modelPath: model.path, modelLabel: model.label, reps: args.placementReps, graphCacheDir, log })
}

/** The long-context check on the Llama-3.2-1B Q4_K_M shape (see bench/long-context.ts). */
async function runLongContext(graphCacheDir: string): Promise<LongContextRecord> {
  const model = await ensureBenchModel('1b-q4_k_m', MODELS_DIR, log)
  log(`long context: ${model.label}: ${model.path}`)
  const summary = await summarizeGguf(model.path)
  return longContextCheck(model, summary, { threads: LARGE_MODEL_THREADS[0], graphCacheDir, peersDir: PEERS_DIR, log })
}

/** `--only long-context`: that check alone, written as <date>-long-context.{json,md}. */
async function longContextOnly(args: BenchArgs): Promise<void> {
  const started = new Date()
  log(`long context only; load average ${loadLine()}`)
  await ensurePeers(PEERS_DIR, log)
  await mkdir(MODELS_DIR, { recursive: true })
  await removeStaleGraphCaches()
  const graphCacheDir = await mkdtemp(join(MODELS_DIR, 'graphs-'))
  let record: LongContextRecord
  try {
    record = await runLongContext(graphCacheDir)
  } finally {
    await rm(graphCacheDir, { recursive: true, force: true })
  }
  const cpu = cpus()
  const machineLine =
    `${cpu[0]?.model ?? 'unknown'}, ${cpu.length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}. ` +
    `Run ${started.toISOString().slice(0, 16)}Z; load average ${loadLine()} at end (a cold graph cache: Tandem's load includes compiling).`
  const base = `${started.toISOString().slice(0, 10)}-long-context`
  const markdown = `# Tandem long context (${base})\n\n${machineLine}\n\n${renderLongContext(record)}\n`
  await writeResults(resolve(args.outDir ?? join(BENCH_DIR, 'results')), base, { schema: 1, startedAt: started.toISOString(), args, longContext: record }, markdown)
}

/** One section alone, measured by `measure` and written as <date>-<suffix>.{json,md} with the machine. */
async function sectionOnly<R>(args: BenchArgs, section: { suffix: string; title: string; what: string; key: string; measure: () => Promise<R>; render: (r: R) => string }): Promise<void> {
  const started = new Date()
  const loadAtStart = loadLine()
  log(`${section.what} only; load average ${loadAtStart}`)
  await mkdir(MODELS_DIR, { recursive: true })
  const record = await section.measure()
  const cpu = cpus()
  const machine = { cpuModel: cpu[0]?.model ?? 'unknown', cores: cpu.length, totalMemBytes: totalmem(), kernel: release(), loadAverageStart: loadAtStart, loadAverageEnd: loadLine() }
  const base = `${started.toISOString().slice(0, 10)}-${section.suffix}`
  const machineLine =
    `${machine.cpuModel}, ${machine.cores} cores, ${Math.round(machine.totalMemBytes / 2 ** 30)} GiB; Node ${process.version}. ` +
    `Run ${started.toISOString().slice(0, 16)}Z; load average ${machine.loadAverageStart} at start, ${machine.loadAverageEnd} at end.`
  const markdown = `# ${section.title} (${base})\n\n${machineLine}\n\n${section.render(record)}\n`
  const json = { schema: 1, startedAt: started.toISOString(), finishedAt: new Date().toISOString(), args, machine, [section.key]: record }
  await writeResults(resolve(args.outDir ?? join(BENCH_DIR, 'results')), base, json, markdown)
}

/** `--only virtual-npu`: the NPU-path section alone, written as <date>-virtual-npu.{json,md}. */
function virtualNpuOnly(args: BenchArgs): Promise<void> {
  const measure = (): Promise<NpuRecord> => benchmarkNpuPath({ modelsDir: MODELS_DIR, reps: args.reps, log })
  return sectionOnly(args, { suffix: 'virtual-npu', title: 'Tandem NPU path', what: 'NPU path', key: 'npuPath', measure, render: renderNpuPath })
}

/** `--only npu-schedule`: the NPU section's scheduling rows alone, written as <date>-npu-schedule.{json,md}. */
function npuScheduleOnly(args: BenchArgs): Promise<void> {
  const measure = (): Promise<NpuScheduleRecord> => benchmarkNpuSchedule({ modelsDir: MODELS_DIR, reps: args.reps, log })
  return sectionOnly(args, { suffix: 'npu-schedule', title: 'Tandem NPU scheduling', what: 'NPU scheduling rows', key: 'npuSchedule', measure, render: renderNpuSchedule })
}

/** `--only kv-snapshots`: continuing a conversation, restore vs recompute, written as <date>-kv-snapshots.{json,md}. */
function kvSnapshotsOnly(args: BenchArgs): Promise<void> {
  const measure = (): Promise<KvSnapshotRecord> => benchmarkKvSnapshots({ modelsDir: MODELS_DIR, reps: args.reps, log })
  return sectionOnly(args, { suffix: 'kv-snapshots', title: 'Tandem KV snapshots', what: 'KV snapshot rows', key: 'kvSnapshots', measure, render: renderKvSnapshots })
}

/** `--only summaries`: a 50-page PDF summarized map-reduce, written as <date>-summaries.{json,md}. */
function summariesOnly(args: BenchArgs): Promise<void> {
  const measure = (): Promise<SummaryBenchRecord> => benchmarkSummaries({ modelsDir: MODELS_DIR, log })
  return sectionOnly(args, { suffix: 'summaries', title: 'Tandem document summaries', what: 'document summary', key: 'summaries', measure, render: renderSummaries })
}

/** Writes <base>.json and <base>.md into `outDir` and prints the markdown. */
async function writeResults(outDir: string, base: string, json: unknown, markdown: string): Promise<void> {
  await mkdir(outDir, { recursive: true })
  const jsonPath = join(outDir, `${base}.json`)
  if (existsSync(jsonPath)) log(`overwriting ${jsonPath}`)
  await writeFile(jsonPath, `${JSON.stringify(json, null, 2)}\n`)
  await writeFile(join(outDir, `${base}.md`), markdown)
  process.stdout.write(markdown)
  log(`wrote ${jsonPath} and ${base}.md`)
}

/** `--only placements`: that section alone, written as <date>-placements.{json,md} beside the full runs. */
async function placementsOnly(args: BenchArgs): Promise<void> {
  const started = new Date()
  const loadAtStart = loadLine()
  log(`placements only; ${args.placementReps} rep(s); load average ${loadAtStart}`)
  await mkdir(MODELS_DIR, { recursive: true })
  await removeStaleGraphCaches()
  const graphCacheDir = await mkdtemp(join(MODELS_DIR, 'graphs-'))
  let record: PlacementsRecord
  try {
    record = await runPlacements(args, graphCacheDir)
  } finally {
    await rm(graphCacheDir, { recursive: true, force: true })
  }
  const summary = summarizePlacements(record)
  const cpu = cpus()
  const machine = { cpuModel: cpu[0]?.model ?? 'unknown', cores: cpu.length, totalMemBytes: totalmem(), kernel: release(), loadAverageStart: loadAtStart, loadAverageEnd: loadLine() }
  const base = `${started.toISOString().slice(0, 10)}${args.quick ? '-quick' : ''}-placements`
  const machineLine =
    `${machine.cpuModel}, ${machine.cores} cores, ${Math.round(machine.totalMemBytes / 2 ** 30)} GiB; Node ${process.version}. ` +
    `Run ${started.toISOString().slice(0, 16)}Z; load average ${machine.loadAverageStart} at start, ${machine.loadAverageEnd} at end.`
  const markdown = `# Tandem placements (${base})\n\n${machineLine}\n\n${renderPlacementsMarkdown(record, summary)}`
  const json = { schema: 1, startedAt: started.toISOString(), finishedAt: new Date().toISOString(), args, machine, placements: { record, summary } }
  await writeResults(resolve(args.outDir ?? join(BENCH_DIR, 'results')), base, json, markdown)
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
  process.exitCode = 1
})
