/**
 * Malformed GGUF files: truncated and byte-flipped copies of stories260K.gguf, 2^63 counts and lengths,
 * unsupported types and architectures, bad ranges. Every failure must be a ModelFormatError naming the
 * file; never another error type, a hang or a huge allocation.
 */
import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { BinaryReader } from '../../main/engine/model/binary-reader'
import { ModelFormatError } from '../../main/engine/model/errors'
import { parseGguf, type GgufArray, type GgufValue } from '../../main/engine/model/gguf'
import { loadGgufModel } from '../../main/engine/model/gguf-model'
import type { LoadedModel } from '../../main/engine/model/types'
import { encodeGguf, GGML_TYPE, type GgufWriterTensor } from '../fixtures/gguf-writer'
import { sharedModel, tempDir } from '../helpers/paths'

const original = readFileSync(sharedModel('stories260K/stories260K.gguf'))
const DATA_OFFSET = 14176
const tmp = tempDir('tandem-gguf-bad-')
afterAll(() => tmp.dispose())

let counter = 0
/** Writes `bytes` to a fresh temp file and loads it; returns the model or the error. */
async function load(bytes: Uint8Array, weights = true): Promise<{ path: string; result: LoadedModel | unknown }> {
  const path = join(tmp.dir, `case-${counter++}.gguf`)
  await writeFile(path, bytes)
  try {
    return { path, result: await loadGgufModel(path, { weights }) }
  } catch (e) {
    return { path, result: e }
  }
}

/** Asserts a ModelFormatError for `path` whose message matches `pattern`. */
function expectFormatError(path: string, result: unknown, pattern?: RegExp): void {
  if (!(result instanceof ModelFormatError)) throw new Error(`expected ModelFormatError for ${path}, got ${String(result)}`)
  expect(result.file).toBe(path)
  expect(result.message).toContain(path)
  if (pattern) expect(result.message).toMatch(pattern)
}

async function expectLoadError(bytes: Uint8Array, pattern: RegExp): Promise<void> {
  for (const weights of [true, false]) {
    const { path, result } = await load(bytes, weights)
    expectFormatError(path, result, pattern)
  }
}

/** Offset just past the first occurrence of `text` in the header. */
function after(text: string): number {
  const i = original.indexOf(Buffer.from(text))
  if (i < 0 || i > DATA_OFFSET) throw new Error(`${text} not in header`)
  return i + Buffer.byteLength(text)
}

function patched(edit: (view: DataView, bytes: Uint8Array) => void): Uint8Array {
  const copy = new Uint8Array(original)
  edit(new DataView(copy.buffer), copy)
  return copy
}

/** stories260K re-encoded with edited metadata and tensors. */
function rewritten(
  editMeta: (m: Array<[string, GgufValue]>) => Array<[string, GgufValue]>,
  editTensors: (t: GgufWriterTensor[]) => GgufWriterTensor[] = (t) => t
): Uint8Array {
  const h = parseGguf(new BinaryReader(original, 'stories260K.gguf'))
  const tensors = h.tensors.map((t) => ({
    name: t.name,
    dims: [...t.dims].reverse(),
    ggmlType: t.type.id,
    bytes: original.subarray(t.absoluteOffset, t.absoluteOffset + t.sizeBytes)
  }))
  return encodeGguf({ metadata: editMeta([...h.metadata.entries()]), tensors: editTensors(tensors) })
}

const TABLE_START = after('token_embd.weight') - 'token_embd.weight'.length - 8

describe('truncated stories260K.gguf', () => {
  it('fails cleanly at every cut: header, metadata, tensor table, data', async () => {
    const cuts = new Set([0, 1, 3, 4, 7, 8, 15, 16, 23, 24, 25, 31, 40, 60, 61, 70, 100])
    for (let at = 128; at < DATA_OFFSET; at += 331) cuts.add(at)
    for (const d of [-1, 0, 4, 8, 20, 25, 40, 100]) cuts.add(TABLE_START + d)
    for (const at of [DATA_OFFSET - 1, DATA_OFFSET, DATA_OFFSET + 1, 20_000, 145_248, 600_000, original.length - 1]) cuts.add(at)
    for (const at of cuts) {
      const { path, result } = await load(original.subarray(0, at), at % 2 === 0)
      expectFormatError(path, result)
    }
  })
})

describe('byte-flipped stories260K.gguf', () => {
  it('either loads or gives a ModelFormatError for flips in the header, and loads for flips in data', async () => {
    const rssBefore = process.memoryUsage().rss
    let loaded = 0
    let rejected = 0
    for (let at = 0; at < DATA_OFFSET; at += 47) {
      const copy = new Uint8Array(original)
      copy[at] ^= 0xff
      const { path, result } = await load(copy, at % 3 !== 0)
      if (result instanceof Error) {
        expectFormatError(path, result)
        rejected++
      } else loaded++
    }
    for (const at of [DATA_OFFSET, DATA_OFFSET + 3, 300_001, 700_002, original.length - 1]) {
      const copy = new Uint8Array(original)
      copy[at] ^= 0xff
      const { result } = await load(copy)
      expect(result instanceof Error ? result.message : 'loaded').toBe('loaded')
    }
    expect(rejected).toBeGreaterThan(40)
    expect(loaded).toBeGreaterThan(40) // flips inside token text, scores and the like are still valid files
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(512 * 2 ** 20)
  })
})

describe('hostile counts and lengths', () => {
  const u64At = (offset: number, value: bigint): Uint8Array => patched((v) => v.setBigUint64(offset, value, true))
  const HUGE = 2n ** 63n
  const tokensCountAt = after('tokenizer.ggml.tokens') + 8 // value type, item type, then the u64 count
  const embdDimsAt = after('token_embd.weight') + 4 // after n_dims

  it('rejects 2^63 before allocating', async () => {
    await expectLoadError(u64At(8, HUGE), /tensor count is 9223372036854775808, more than the limit/)
    await expectLoadError(u64At(16, HUGE), /metadata count is 9223372036854775808, more than the limit/)
    await expectLoadError(u64At(24, HUGE), /metadata key 0 length is 9223372036854775808, more than the limit/)
    await expectLoadError(u64At(tokensCountAt, HUGE), /tokenizer.ggml.tokens array length is 9223372036854775808, more than the limit/)
    await expectLoadError(u64At(tokensCountAt + 8, HUGE), /tokenizer.ggml.tokens length is 9223372036854775808, more than the limit/)
    await expectLoadError(u64At(embdDimsAt, HUGE), /token_embd.weight dimension 0 is 9223372036854775808/)
  })

  it('rejects counts within the limits that cannot fit in the file', async () => {
    await expectLoadError(u64At(8, 1_000_000n), /cannot fit in a 1185376-byte file/)
    await expectLoadError(u64At(tokensCountAt, 10_000_000n), /10000000 items of string cannot fit/)
    // a 1 GiB string is over the 16 MiB limit; a 2 MiB one is within it but longer than the file
    await expectLoadError(u64At(tokensCountAt + 8, 2n ** 30n), /more than the limit/)
    await expectLoadError(u64At(tokensCountAt + 8, 2n ** 21n), /file ends inside tokenizer.ggml.tokens/)
  })

  it('rejects deep nesting', async () => {
    let arr: GgufArray = { itemType: 'u8', values: [1] }
    for (let i = 0; i < 6; i++) arr = { itemType: 'array', values: [arr] }
    await expectLoadError(rewritten((m) => [...m, ['x.deep', { type: 'array', value: arr }]]), /nested deeper than 4/)
  })
})

describe('unsupported content', () => {
  it('names an unsupported tensor type and lists the supported ones', async () => {
    const typeAt = after('token_embd.weight') + 4 + 16
    const bytes = patched((v) => v.setUint32(typeAt, 13, true))
    await expectLoadError(bytes, /token_embd.weight: tensor type Q5_K \(ggml type 13\) is not supported; supported types: F32 \(0\), F16 \(1\), Q4_0 \(2\), Q8_0 \(8\), Q4_K \(12\), Q6_K \(14\), BF16 \(30\)/)
    const unknown = patched((v) => v.setUint32(typeAt, 999, true))
    await expectLoadError(unknown, /unknown type 999/)
  })

  it('names an unknown architecture and lists the supported ones', async () => {
    const at = after('general.architecture') + 4 + 8
    const bytes = patched((_, b) => b.set(Buffer.from('mamba'), at))
    await expectLoadError(bytes, /architecture "mamba" is not supported; supported: llama, qwen2/)
  })

  it('rejects big-endian files, other versions and bad magic', async () => {
    await expectLoadError(patched((_, b) => b.set([0, 0, 0, 3], 4)), /big-endian GGUF files are not supported/)
    await expectLoadError(patched((v) => v.setUint32(4, 1, true)), /GGUF version 1 is not supported/)
    await expectLoadError(patched((v) => v.setUint32(4, 4, true)), /unsupported GGUF version 4/)
    await expectLoadError(patched((_, b) => b.set(Buffer.from('GGML'), 0)), /not a GGUF file/)
  })

  it('rejects an unsupported tokenizer, mismatched vocab arrays and mixture-of-experts', async () => {
    const set = (key: string, value: GgufValue) => (m: Array<[string, GgufValue]>): Array<[string, GgufValue]> =>
      m.map(([k, v]) => [k, k === key ? value : v])
    await expectLoadError(rewritten(set('tokenizer.ggml.model', { type: 'string', value: 'bert' })), /tokenizer model "bert" is not supported; supported: llama, gpt2/)
    await expectLoadError(rewritten(set('tokenizer.ggml.scores', { type: 'array', value: { itemType: 'f32', values: [1, 2] } })), /scores has 2 entries for 512 tokens/)
    await expectLoadError(rewritten((m) => [...m, ['llama.expert_count', { type: 'u32', value: 8 }]]), /mixture-of-experts/)
    await expectLoadError(rewritten((m) => m.filter(([k]) => k !== 'llama.attention.layer_norm_rms_epsilon')), /layer_norm_rms_epsilon is missing/)
    await expectLoadError(rewritten(set('llama.block_count', { type: 'string', value: '5' })), /llama.block_count: has type string, expected an integer/)
  })
})

describe('tensor table checks', () => {
  it('names a tensor whose shape does not match the config', async () => {
    const dimsAt = after('blk.0.attn_k.weight') + 4
    const bytes = patched((v) => {
      v.setBigUint64(dimsAt, 32n, true) // [64, 32] innermost-first -> [32, 64]
      v.setBigUint64(dimsAt + 8, 64n, true)
    })
    await expectLoadError(bytes, /tensor blk.0.attn_k.weight has shape \[64, 32\], expected \[32, 64\]/)
    await expectLoadError(rewritten((m) => m, (t) => t.filter((x) => x.name !== 'blk.3.ffn_up.weight')), /tensor blk.3.ffn_up.weight is missing/)
  })

  it('rejects overlapping, out-of-file and misaligned tensor data', async () => {
    const offsetOf = (name: string): number => after(name) + 4 + 16 + 4 // n_dims, two dims, type
    await expectLoadError(patched((v) => v.setBigUint64(offsetOf('output.weight'), 0n, true)), /tensor output.weight data overlaps tensor token_embd.weight|tensor token_embd.weight data overlaps/)
    await expectLoadError(patched((v) => v.setBigUint64(offsetOf('output.weight'), 2n ** 20n, true)), /output.weight data .* lies outside the file/)
    await expectLoadError(patched((v) => v.setBigUint64(offsetOf('output.weight'), 131336n, true)), /not a multiple of the alignment 32/)
  })

  it('checks ranges in a parsed file directly', () => {
    const t = (name: string, offsetOverride?: number): GgufWriterTensor => ({ name, dims: [64], ggmlType: GGML_TYPE.f32, bytes: new Uint8Array(256), offsetOverride })
    const parse = (tensors: GgufWriterTensor[]): unknown => {
      try {
        return parseGguf(new BinaryReader(encodeGguf({ metadata: [], tensors }), 'mem.gguf'))
      } catch (e) {
        return e
      }
    }
    expectFormatError('mem.gguf', parse([t('a'), t('b', 128)]), /tensor b data overlaps tensor a/)
    expectFormatError('mem.gguf', parse([t('a'), t('b', 4096)]), /tensor b data \[\d+, \d+\) lies outside the file/)
    expectFormatError('mem.gguf', parse([t('a'), t('a', 256)]), /duplicate tensor name a/)
    // Q8_0 rows must be whole 32-value blocks
    const file = encodeGguf({ metadata: [], tensors: [{ name: 'q', dims: [48], ggmlType: GGML_TYPE.f32, bytes: new Uint8Array(192) }] })
    new DataView(file.buffer).setUint32(24 + 8 + 1 + 4 + 8, GGML_TYPE.q8_0, true)
    expectFormatError('mem.gguf', (() => { try { return parseGguf(new BinaryReader(file, 'mem.gguf')) } catch (e) { return e } })(), /innermost dimension 48 is not a multiple of the Q8_0 block size 32/)
  })
})
