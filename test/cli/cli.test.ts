/**
 * The `tandem` CLI as users run it: a child process through bin/tandem.mjs, the real engine in its worker,
 * the shared trained models, and a private graph cache.
 */
import { copyFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { writeHfModel } from '../fixtures/hf-writer'
import { calibrationPath, modelFingerprint, readCalibration } from '../../main/engine/graph'
import { loadModel } from '../../main/engine/model'
import { repoRoot, sharedModel, tempDir } from '../helpers/paths'
import { onlyJsonLine, runCli, type CliRun } from './run-cli'
import { PUBLISHED_STORIES260K_IDS, PUBLISHED_STORIES260K_TEXT_START, PUBLISHED_TINYSTORIES_IDS, PUBLISHED_TINYSTORIES_TEXT_START } from '../helpers/published'

const scratch = tempDir('tandem-cli-')
afterAll(() => scratch.dispose())

function tandem(args: string[]): Promise<CliRun> {
  return runCli(args, join(scratch.dir, 'cache'), 120_000)
}

interface JsonOut {
  text: string
  tokens: number[]
  promptTokens: number[]
  devices: { id: string; busyMs: number; runs: number }[]
  stats: { ttftMs: number; prefillTokensPerSec: number; decodeTokensPerSec: number }
}

function parseJson(stdout: string): JsonOut {
  return onlyJsonLine(stdout, { text: expect.any(String), tokens: expect.any(Array), promptTokens: expect.any(Array) }) as JsonOut
}

describe('tandem generate', () => {
  it('prints only the greedy continuation of stories260K.bin, matching the published sample', async () => {
    const r = await tandem(['generate', '--model', sharedModel('stories260K/stories260K.bin'), '--max-tokens', '64', '--temperature', '0'])
    expect(r.code).toBe(0)
    expect(r.stdout.startsWith(PUBLISHED_STORIES260K_TEXT_START)).toBe(true)
  })

  it('--json from the GGUF copy gives the published ids, BOS as prompt, and stats', async () => {
    const r = await tandem(['generate', '--model', sharedModel('stories260K/stories260K.gguf'), '--max-tokens', '64', '--temperature', '0', '--json'])
    expect(r.code).toBe(0)
    const out = parseJson(r.stdout)
    expect(out.tokens).toEqual(PUBLISHED_STORIES260K_IDS)
    expect(out.promptTokens).toEqual([1])
    expect(out.text.startsWith(PUBLISHED_STORIES260K_TEXT_START)).toBe(true)
    expect(out.stats.ttftMs).toBeGreaterThan(0)
    expect(out.stats.prefillTokensPerSec).toBeGreaterThan(0)
    expect(out.stats.decodeTokensPerSec).toBeGreaterThan(0)
  })

  it('--prefill-chunk sets the prompt tokens per graph run without a placement (runs counted in --json)', async () => {
    const prompt = 'Once upon a time there was a little girl named Lily who loved to play outside. '.repeat(4)
    const runsWith = async (extra: string[]): Promise<{ prompt: number; runs: number }> => {
      const r = await tandem(['generate', '--model', sharedModel('stories260K/stories260K.gguf'), '--prompt', prompt, '--max-tokens', '1', '--temperature', '0', '--json', ...extra])
      expect(r.code).toBe(0)
      const out = parseJson(r.stdout)
      expect(out.devices.map((d) => d.id)).toEqual(['cpu'])
      return { prompt: out.promptTokens.length, runs: out.devices[0].runs }
    }
    const chunked = await runsWith(['--prefill-chunk', '16'])
    // one token generated: it comes from the prompt's logits, so every run was a prefill chunk
    expect(chunked.prompt).toBeGreaterThan(32)
    expect(chunked.runs).toBe(Math.ceil(chunked.prompt / 16))
    expect((await runsWith([])).runs).toBe(1)
  })

  it('encodes a prompt like run.c (BOS, dummy-prefix space) and continues it', async () => {
    const r = await tandem(['generate', '--model', sharedModel('stories260K/stories260K.bin'), '--prompt', 'Once upon a time', '--max-tokens', '8', '--temperature', '0', '--json'])
    expect(r.code).toBe(0)
    const out = parseJson(r.stdout)
    // The published greedy run starts with exactly these pieces, so the continuation must be its next ids.
    const n = out.promptTokens.length - 1
    expect(out.promptTokens).toEqual([1, ...PUBLISHED_STORIES260K_IDS.slice(0, n)])
    expect(out.tokens).toEqual(PUBLISHED_STORIES260K_IDS.slice(n, n + 8))
    expect(out.text.startsWith(',')).toBe(true)
  })

  it('runs the TinyStories-656K Hugging Face folder and reproduces its published ids', async () => {
    const r = await tandem(['generate', '--model', sharedModel('tinystories-656K'), '--max-tokens', '30', '--temperature', '0', '--json'])
    expect(r.code).toBe(0)
    const out = parseJson(r.stdout)
    expect(out.promptTokens).toEqual([1])
    expect(out.tokens).toEqual(PUBLISHED_TINYSTORIES_IDS)
    expect(out.text.startsWith(PUBLISHED_TINYSTORIES_TEXT_START)).toBe(true)
  })

  it('--chat renders the model\'s chat template (ChatML) around system and user text', async () => {
    const written = await writeHfModel(join(scratch.dir, 'qwen2-chat'), { preset: 'qwen2', seed: 5 })
    const r = await tandem(['generate', '--model', written.folder, '--chat', '--system', 'Be brief.', '--prompt', 'hello', '--max-tokens', '3', '--temperature', '0', '--json'])
    expect(r.code).toBe(0)
    const out = parseJson(r.stdout)
    const imStart = written.specialIds['<|im_start|>']
    const imEnd = written.specialIds['<|im_end|>']
    // <|im_start|>system … <|im_end|> <|im_start|>user … <|im_end|> <|im_start|>assistant
    expect(out.promptTokens.filter((id) => id === imStart)).toHaveLength(3)
    expect(out.promptTokens.filter((id) => id === imEnd)).toHaveLength(2)
    expect(out.tokens.length).toBeLessThanOrEqual(3)
  })

  it('sampling with a seed is reproducible', async () => {
    const args = ['generate', '--model', sharedModel('stories260K/stories260K.bin'), '--max-tokens', '20', '--temperature', '1', '--seed', '42', '--json']
    const a = parseJson((await tandem(args)).stdout)
    const b = parseJson((await tandem(args)).stdout)
    expect(a.tokens).toEqual(b.tokens)
    expect(a.tokens).toHaveLength(20)
  })

  it('says on stderr what a first open does, and nothing when the compiled model is reused', async () => {
    const cache = join(scratch.dir, 'fresh-cache')
    const args = ['generate', '--model', sharedModel('stories260K/stories260K.gguf'), '--max-tokens', '2', '--cache-dir', cache]
    const first = await tandem(args)
    expect(first.code).toBe(0)
    expect(first.stderr.split('\n').filter((l) => l.startsWith('tandem: '))).toEqual([
      'tandem: compiling the model for this machine (once; later runs reuse it)…',
      'tandem: hashing the model file for the cache…',
      'tandem: loading the compiled model…'
    ])
    const again = await tandem(args)
    expect(again.code).toBe(0)
    expect(again.stderr).toBe('')
  })

  it('finds the tokenizer given with --tokenizer when it is not beside the model', async () => {
    const copy = join(scratch.dir, 'alone.bin')
    copyFileSync(sharedModel('stories260K/stories260K.bin'), copy)
    const without = await tandem(['generate', '--model', copy, '--max-tokens', '4'])
    expect(without.code).toBe(1)
    expect(without.stderr).toMatch(/tok/i)
    const withTok = await tandem(['generate', '--model', copy, '--tokenizer', sharedModel('stories260K/tok512.bin'), '--max-tokens', '4', '--temperature', '0'])
    expect(withTok.code).toBe(0)
    expect(withTok.stdout.startsWith('Once upon')).toBe(true)
  })

  it('gives clear errors for a missing model, a corrupt model, a model without chat template, and bad flags', async () => {
    const missing = await tandem(['generate', '--model', join(scratch.dir, 'nope.gguf')])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('nope.gguf')
    const bad = join(scratch.dir, 'bad.gguf')
    writeFileSync(bad, Buffer.from('GGUF\x03\x00\x00\x00garbage'))
    const corrupt = await tandem(['generate', '--model', bad])
    expect(corrupt.code).toBe(1)
    expect(corrupt.stderr).toContain('bad.gguf')
    const chat = await tandem(['generate', '--model', sharedModel('stories260K/stories260K.bin'), '--chat', '--prompt', 'hi'])
    expect(chat.code).toBe(1)
    expect(chat.stderr).toMatch(/chat template/)
    const usage = await tandem(['generate', '--model', 'x', '--temperature', 'hot'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toMatch(/--temperature/)
    const noModel = await tandem(['generate'])
    expect(noModel.code).toBe(2)
    const option = await tandem(['devices', '--no-probe', '--ep-option', 'openvino:device_type=NPU'])
    expect(option.code).toBe(2)
    expect(option.stderr).toContain('--ep-option openvino:device_type=NPU: no --ep-library named openvino')
    const shape = await tandem(['devices', '--no-probe', '--ep-option', 'device_type=NPU'])
    expect(shape.code).toBe(2)
    expect(shape.stderr).toContain('--ep-option must be NAME:KEY=VALUE')
  })
})

describe('tandem calibrate', () => {
  it('stores the W8A8 calibration of stories260K under its fingerprint, in the graph cache, readable by the engine', async () => {
    const r = await tandem(['calibrate', '--model', sharedModel('stories260K/stories260K.gguf'), '--corpus', join(repoRoot, 'eval', 'corpus', 'calibration.txt'), '--tokens', '300', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const out = onlyJsonLine(r.stdout, { path: expect.any(String) }) as { path: string; tokens: number; matmuls: number; hotChannelShare: number; hotOutlierShare: number; layersByImportance: { layer: number }[] }
    const model = await loadModel(sharedModel('stories260K/stories260K.gguf'))
    if (!model.weights) throw new Error('no weights')
    expect(out.path).toBe(calibrationPath(join(scratch.dir, 'cache'), modelFingerprint({ config: model.config, weights: model.weights })))
    const stored = await readCalibration(out.path, model.weights)
    expect(stored.tokens).toBe(out.tokens)
    expect(out.tokens).toBeGreaterThanOrEqual(300)
    expect(out.matmuls).toBe(model.config.nLayers * 7)
    expect(out.layersByImportance.map((l) => l.layer).sort()).toEqual([0, 1, 2, 3, 4])
    expect(out.hotChannelShare).toBeLessThanOrEqual(0.05)
    const missing = await tandem(['calibrate', '--model', sharedModel('stories260K/stories260K.gguf'), '--corpus', join(scratch.dir, 'nope.txt')])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('nope.txt')
    const usage = await tandem(['calibrate', '--model', sharedModel('stories260K/stories260K.gguf')])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('--corpus FILE is required')
  })
})

describe('tandem info', () => {
  it('describes architecture, sizes, tokenizer and quantization', async () => {
    const r = await tandem(['info', '--model', sharedModel('stories260K/stories260K_q80.bin'), '--json'])
    expect(r.code).toBe(0)
    const d: unknown = JSON.parse(r.stdout)
    expect(d).toMatchObject({ format: 'llama2c', architecture: 'llama', dim: 64, layers: 5, heads: 8, kvHeads: 4, vocabSize: 512 })
    expect(JSON.stringify(d)).toMatch(/q8|Q8/)
    const text = await tandem(['info', '--model', sharedModel('tinystories-656K')])
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/architecture\s+llama/)
    expect(text.stdout).toMatch(/tokenizer\s+hf/)
  })
})
