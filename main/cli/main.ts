/**
 * @file `tandem` command line: `generate` streams a continuation, `info` describes a model, `serve` runs the
 * app in the browser (main/cli/serve.ts), `devices` lists the compute devices (main/cli/devices.ts), `calibrate`
 * prepares W8A8 for integer NPUs (main/cli/calibrate.ts), `summarize` summarizes files (main/cli/summarize.ts).
 * stdout carries only the result (text or one JSON object); diagnostics go to stderr.
 */
import { discoverDevices, loadModel, TextModel, type ChatMessage, type GenerationResult, type LoadedModel } from '../engine'
import { HELP, parseCli, UsageError, type GenerateArgs, type InfoArgs } from './args'
import { calibrateCommand } from './calibrate'
import { devices } from './devices'
import { resolveCliPlacement } from './placement'
import { firstOpenReporter } from './open-progress'
import { serve } from './serve'
import { summarizeCommand } from './summarize'

/** Runs the CLI; returns the process exit code (0 ok, 1 failure, 2 usage). */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    const args = parseCli(argv)
    if (args.command === 'help') {
      process.stdout.write(HELP + '\n')
      return 0
    }
    if (args.command === 'info') return await info(args)
    if (args.command === 'serve') return await serve(args)
    if (args.command === 'devices') return await devices(args)
    if (args.command === 'calibrate') return await calibrateCommand(args)
    if (args.command === 'summarize') return await summarizeCommand(args)
    return await generate(args)
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`tandem: ${e.message}\n\n${HELP}\n`)
      return 2
    }
    process.stderr.write(`tandem: ${e instanceof Error ? e.message : String(e)}\n`)
    return 1
  }
}


async function generate(args: GenerateArgs): Promise<number> {
  const log = (line: string): void => void process.stderr.write(`tandem: ${line}\n`)
  // the header is parsed once, here; the placement and the model worker use what it found
  const header = await loadModel(args.model, { tokenizerPath: args.tokenizer, weights: false })
  const placed = args.placement === undefined ? null : await resolveCliPlacement(args.placement, header, { prefillChunkTokens: args.prefillChunk, threads: args.threads, log, providers: args.providers })
  const model = await TextModel.open(header, {
    threads: args.threads,
    cacheDir: args.cacheDir,
    placement: placed?.placement,
    devices: placed?.devices,
    // with a placement, --prefill-chunk already set its chunk
    prefillChunkTokens: placed === null ? args.prefillChunk : undefined,
    w8a8: args.w8a8,
    onProgress: firstOpenReporter(log)
  })
  let r: GenerationResult
  try {
    const messages: ChatMessage[] = []
    if (args.system !== undefined) messages.push({ role: 'system', content: args.system })
    messages.push({ role: 'user', content: args.prompt })
    const promptIds = args.chat ? model.encodeChat(messages) : model.encodePrompt(args.prompt)
    const abort = new AbortController()
    const onSigint = (): void => abort.abort()
    process.once('SIGINT', onSigint)
    const generation = model.generate({
      promptIds,
      maxTokens: args.maxTokens,
      stopStrings: args.stop,
      signal: abort.signal,
      sampling: {
        temperature: args.temperature,
        seed: args.seed,
        topK: args.topK,
        topP: args.topP,
        minP: args.minP,
        repetitionPenalty: args.repetitionPenalty
      }
    })
    for await (const event of generation) if (!args.json) process.stdout.write(event.text)
    process.off('SIGINT', onSigint)
    r = await generation.result
  } finally {
    await model.dispose()
  }
  // device names, only where they are printed: the probed list with a placement; otherwise the unprobed listing (no probe, ~ms)
  const known = placed?.devices ?? (args.json || args.stats ? await discoverDevices({ probe: false }) : [])
  const devices = r.stats.devices.map((d) => ({ id: d.id, name: known.find((k) => k.id === d.id)?.name ?? d.id, busyMs: round(d.busyMs), runs: d.runs }))
  if (args.json) {
    const out = {
      text: r.text,
      tokens: r.tokens,
      promptTokens: r.promptTokens,
      stopReason: r.stopReason,
      placement: placed?.placement.name ?? null,
      devices,
      stats: {
        ttftMs: round(r.stats.ttftMs),
        prefillTokensPerSec: round(r.stats.prefillTokensPerSec),
        decodeTokensPerSec: round(r.stats.decodeTokensPerSec)
      }
    }
    process.stdout.write(JSON.stringify(out) + '\n')
  } else {
    process.stdout.write('\n')
  }
  if (r.stopReason === 'context-full') process.stderr.write(`tandem: stopped at the context limit (${model.contextLength} tokens)\n`)
  if (args.stats) {
    const s = r.stats
    process.stderr.write(
      `prompt ${s.promptTokens} tok, generated ${s.generatedTokens} tok, ttft ${s.ttftMs.toFixed(1)} ms, ` +
        `prefill ${s.prefillTokensPerSec.toFixed(1)} tok/s, decode ${s.decodeTokensPerSec.toFixed(1)} tok/s (${r.stopReason})\n`
    )
    if (devices.length > 0) {
      const where = placed === null ? 'one CPU session' : `placement "${placed.placement.name}"`
      process.stderr.write(`busy (${where}): ${devices.map((d) => `${d.id} ${d.busyMs.toFixed(1)} ms`).join(', ')}\n`)
    }
  }
  return 0
}

function round(x: number): number {
  return Math.round(x * 100) / 100
}

/** One plain-data description of a model, shared by the text and JSON forms of `info`. */
export function describeModel(m: LoadedModel): Record<string, string | number | boolean | null> {
  const c = m.config
  return {
    path: m.path,
    format: m.format,
    architecture: c.architecture,
    dim: c.dim,
    hiddenDim: c.hiddenDim,
    layers: c.nLayers,
    heads: c.nHeads,
    kvHeads: c.nKvHeads,
    headDim: c.headDim,
    vocabSize: c.vocabSize,
    contextLength: c.contextLength,
    ropeTheta: c.ropeTheta,
    ropePairing: c.ropePairing,
    ropeScaling: c.ropeScaling ? `${c.ropeScaling.type} ×${c.ropeScaling.factor}` : null,
    tiedEmbeddings: c.tiedEmbeddings,
    qkvBias: c.qkvBias,
    normEps: c.normEps,
    quantization: m.quantization,
    tensorTypes: m.tensorTypes.join(', '),
    tokenizer: `${m.tokenizer.kind} (${m.tokenizer.vocabSize} tokens, bos ${m.tokenizer.bosId ?? 'none'}, eos ${m.tokenizer.eosId ?? 'none'})`,
    chatTemplate: m.chatTemplate !== null
  }
}

async function info(args: InfoArgs): Promise<number> {
  const m = await loadModel(args.model, { tokenizerPath: args.tokenizer, weights: false })
  const d = describeModel(m)
  if (args.json) {
    process.stdout.write(JSON.stringify(d) + '\n')
    return 0
  }
  const width = Math.max(...Object.keys(d).map((k) => k.length))
  for (const [k, v] of Object.entries(d)) process.stdout.write(`${k.padEnd(width)}  ${v ?? '-'}\n`)
  return 0
}
