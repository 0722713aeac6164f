import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ModelFormatError } from '../../main/engine/model/errors'
import { loadGgufModel } from '../../main/engine/model/gguf-model'
import { preTokenizerPattern } from '../../main/engine/model/tokenizer/bpe'
import { createGgufTokenizer } from '../../main/engine/model/tokenizer/gguf-tokenizer'
import { createHfTokenizer, loadHfTokenizer } from '../../main/engine/model/tokenizer/hf-tokenizer'
import { createDetokenizer } from '../../main/engine/model/tokenizer/incremental'
import { loadLlama2cTokenizer, parseLlama2cTokenizer } from '../../main/engine/model/tokenizer/llama2c-tokenizer'
import type { GgufVocab, Tokenizer } from '../../main/engine/model/tokenizer/types'
import { byteLevelTokenizerJson } from '../fixtures/hf-writer'
import { BPE_SPECIAL_TOKENS, bpeVocab } from '../fixtures/synthetic-vocab'
import { sharedModel, tempDir } from '../helpers/paths'
import { PUBLISHED_STORIES260K_IDS, PUBLISHED_TINYSTORIES_IDS } from '../helpers/published'

const tokPath = sharedModel('stories260K/tok512.bin')
const tok512 = loadLlama2cTokenizer(tokPath, 512)
const tmp = tempDir()
afterAll(() => tmp.dispose())

const SAMPLES = [
  'Once upon a time, there was a little girl named Lily.',
  'Hello world!',
  '  two  spaces and trailing ',
  'line one\nline two\n\n',
  'café ß € 😀 中文',
  'x',
  "She said, \"I'm sorry, mom.\""
]

/** A GGUF 'gpt2' vocabulary over the synthetic byte-level BPE (ChatML specials are control tokens). */
function syntheticBpeVocab(pre: string | null): GgufVocab {
  const v = bpeVocab(320)
  const eos = v.tokens.indexOf('<|im_end|>')
  return {
    model: 'gpt2',
    pre,
    tokens: v.tokens,
    scores: null,
    tokenTypes: Int32Array.from(v.tokenTypes),
    merges: v.merges,
    bosId: v.tokens.indexOf('<|endoftext|>'),
    eosId: eos,
    unkId: null,
    eotId: null,
    addBos: false,
    addSpacePrefix: false
  }
}

describe('llama2.c tokenizer (tok512.bin)', () => {
  it('decodes the published greedy ids to the published text', () => {
    const text = tok512.decode([1, ...PUBLISHED_STORIES260K_IDS])
    expect(text.startsWith('Once upon a time, there was a little girl named Lily.')).toBe(true)
  })

  it('encodes the published text back to the published ids', () => {
    const text = 'Once upon a time, there was a little girl named Lily.'
    const ids = tok512.encode(text)
    expect(ids[0]).toBe(1)
    expect(ids.slice(1)).toEqual(PUBLISHED_STORIES260K_IDS.slice(0, ids.length - 1))
    expect(tok512.decode(ids)).toBe(text)
  })

  it('follows run.c: dummy prefix, byte fallback = byte + 3, no BOS on request, empty text', () => {
    expect(tok512.encode('', { addBos: false })).toEqual([])
    expect(tok512.encode('')).toEqual([1])
    // the dummy prefix is the single-space token; "a" then merges with it into " a"
    const space = tok512.encode(' ', { addBos: false })
    expect(space).toHaveLength(2)
    expect(tok512.tokenText(space[0])).toBe(' ')
    expect(tok512.encode('a', { addBos: false }).map((id) => tok512.tokenText(id))).toEqual([' a'])
    for (const ch of ['😀', 'ß', '中', 'Ж']) {
      // none of these is a piece of the 512-token vocabulary, so each UTF-8 byte becomes its own token
      const ids = tok512.encode(ch, { addBos: false })
      const bytes = [...new TextEncoder().encode(ch)]
      expect(ids).toEqual([space[0], ...bytes.map((b) => b + 3)])
      expect(tok512.decode([1, ...ids])).toBe(ch)
    }
  })

  it('round-trips mixed text', () => {
    // the dummy-prefix space is dropped again after BOS, so the text comes back unchanged
    for (const s of SAMPLES) expect(tok512.decode(tok512.encode(s))).toBe(s)
  })

  it('rejects malformed files naming the file', () => {
    const good = new Uint8Array(readFileSync(tokPath))
    expect(() => parseLlama2cTokenizer(good.subarray(0, 6000), 512, 't.bin')).toThrow(/t\.bin: file ends inside/)
    expect(() => parseLlama2cTokenizer(good, 511, 't.bin')).toThrow(/more than 511 tokens/)
    const lying = good.slice()
    new DataView(lying.buffer).setInt32(8, 1 << 20, true) // length of token 0
    expect(() => parseLlama2cTokenizer(lying, 512, 't.bin')).toThrow(ModelFormatError)
    const badMax = good.slice()
    new DataView(badMax.buffer).setInt32(0, -1, true)
    expect(() => parseLlama2cTokenizer(badMax, 512, 't.bin')).toThrow(/max_token_length -1/)
    expect(() => loadLlama2cTokenizer(join(tmp.dir, 'missing.bin'), 512)).toThrow(/missing\.bin: file not found/)
  })
})

describe('SentencePiece-style GGUF tokenizer (stories260K.gguf vocabulary)', async () => {
  const gguf = await loadGgufModel(sharedModel('stories260K/stories260K.gguf'), { weights: false })
  const spm = gguf.tokenizer

  it('is the spm kind with the vocabulary specials', () => {
    expect(spm.kind).toBe('spm')
    expect(spm.vocabSize).toBe(512)
    expect(spm.bosId).toBe(1)
    expect(spm.eosId).toBe(2)
    expect(spm.isSpecial(1)).toBe(true)
    expect(spm.isSpecial(300)).toBe(false)
  })

  it('encodes exactly like tok512.bin', () => {
    for (const s of SAMPLES) expect(spm.encode(s), JSON.stringify(s)).toEqual(tok512.encode(s))
  })

  it('decodes the published ids like tok512.bin', () => {
    expect(spm.decode([1, ...PUBLISHED_STORIES260K_IDS])).toBe(tok512.decode([1, ...PUBLISHED_STORIES260K_IDS]))
  })

  it('recognises control tokens only when parseSpecial', () => {
    expect(spm.encode('<s>hi', { addBos: false })[0]).toBe(1)
    expect(spm.encode('<s>hi', { addBos: false, parseSpecial: false })[0]).not.toBe(1)
    expect(spm.decode([1, 2], { skipSpecialTokens: false })).toBe('<s></s>')
  })
})

describe('byte-level BPE GGUF tokenizer', () => {
  const bpe = createGgufTokenizer(syntheticBpeVocab(null))
  const hfVocab = bpeVocab(320)
  const hf = createHfTokenizer(byteLevelTokenizerJson(hfVocab.tokens, hfVocab.merges ?? [], null), {}, { tokenizer: 'tokenizer.json', config: 'tokenizer_config.json' }).tokenizer

  it('round-trips text with emoji and special tokens', () => {
    const text = '<|im_start|>user\nHi there 😀, café!<|im_end|>\n'
    const ids = bpe.encode(text)
    expect(ids[0]).toBe(hfVocab.tokens.indexOf('<|im_start|>'))
    expect(ids).toContain(hfVocab.tokens.indexOf('<|im_end|>'))
    expect(bpe.decode(ids, { skipSpecialTokens: false })).toBe(text)
    expect(bpe.decode(ids)).toBe('user\nHi there 😀, café!\n')
    for (const s of SAMPLES) expect(bpe.decode(bpe.encode(s))).toBe(s)
  })

  it('spells special strings out when parseSpecial is false', () => {
    const ids = bpe.encode('<|im_end|>', { parseSpecial: false })
    expect(ids.length).toBeGreaterThan(1)
    expect(bpe.decode(ids)).toBe('<|im_end|>')
  })

  it('encodes like the Hugging Face library on the same vocabulary', () => {
    for (const s of [...SAMPLES, '<|im_start|>assistant\nOK<|im_end|>']) expect(bpe.encode(s), JSON.stringify(s)).toEqual(hf.encode(s))
  })

  it('reports ChatML end tokens as extra stop ids', () => {
    expect(bpe.eosId).toBe(hfVocab.tokens.indexOf('<|im_end|>'))
    expect(bpe.extraStopIds).toEqual([hfVocab.tokens.indexOf('<|endoftext|>')])
    expect(BPE_SPECIAL_TOKENS.every((s) => bpe.isSpecial(hfVocab.tokens.indexOf(s)))).toBe(true)
  })

  it('chooses the pre-tokenizer from tokenizer.ggml.pre', () => {
    const split = (pre: string | null, s: string): string[] => [...s.matchAll(preTokenizerPattern(pre))].map((m) => m[0])
    expect(split(null, 'abc 12345')).toEqual(['abc', ' 12345'])
    expect(split('llama-bpe', 'abc 12345')).toEqual(['abc', ' ', '123', '45'])
    expect(split('qwen2', 'abc 12345')).toEqual(['abc', ' ', '1', '2', '3', '4', '5'])
    expect(split('something-new', "it's")).toEqual(['it', "'s"])
    expect(() => createGgufTokenizer(syntheticBpeVocab('something-new'))).not.toThrow()
  })
})

describe('Hugging Face tokenizer (TinyStories-656K)', () => {
  const folder = sharedModel('tinystories-656K')
  const { tokenizer: hf } = loadHfTokenizer(folder)

  it('decodes the published greedy ids after BOS', () => {
    expect(hf.kind).toBe('hf')
    expect(hf.bosId).toBe(1)
    expect(hf.eosId).toBe(2)
    const text = hf.decode([1, ...PUBLISHED_TINYSTORIES_IDS])
    expect(text.startsWith('Once upon a time, there was a little girl named Lily. She had a toy car')).toBe(true)
  })

  it('adds BOS by default and round-trips text', () => {
    const ids = hf.encode('Once upon a time')
    expect(ids[0]).toBe(1)
    expect(hf.encode('Once upon a time', { addBos: false })).toEqual(ids.slice(1))
    expect(hf.decode(ids)).toBe('Once upon a time')
  })

  it('rejects malformed tokenizer files naming them', () => {
    const files = { tokenizer: 'tokenizer.json', config: 'tokenizer_config.json' }
    expect(() => loadHfTokenizer(join(tmp.dir, 'nowhere'))).toThrow(/tokenizer\.json: file not found/)
    expect(() => createHfTokenizer([], {}, files)).toThrow(/tokenizer\.json: top level/)
    expect(() => createHfTokenizer({ model: { type: 'BPE', vocab: { a: -1 }, merges: [] } }, {}, files)).toThrow(/model\.vocab\["a"\]/)
    expect(() => createHfTokenizer({ model: { type: 'BPE', vocab: { a: 0 }, merges: [3] } }, {}, files)).toThrow(/merges/)
    expect(() => createHfTokenizer({ model: { type: 'BPE', vocab: { a: 0 }, merges: [] }, added_tokens: [{ id: 'x' }] }, {}, files)).toThrow(
      /added_tokens\[0\]/
    )
    expect(() => createHfTokenizer({ model: { type: 'BPE', vocab: { a: 0 }, merges: [] } }, { bos_token: 5 }, files)).toThrow(
      /tokenizer_config\.json: bos_token/
    )
    expect(() => createHfTokenizer({ model: { type: 'BPE', vocab: { a: 0 }, merges: [] } }, { bos_token: '<s>' }, files)).toThrow(/not in the vocabulary/)
    writeFileSync(join(tmp.dir, 'tokenizer.json'), '{"model": ')
    expect(() => loadHfTokenizer(tmp.dir)).toThrow(/tokenizer\.json: not valid JSON/)
  })
})

/** Pushes ids one by one; returns the pieces and checks they concatenate to the reference text. */
function stream(tok: Tokenizer, context: number[], generated: number[]): string[] {
  const d = createDetokenizer(tok, context)
  const pieces = generated.map((id) => d.push(id))
  pieces.push(d.flush())
  const full = tok.decode([...context, ...generated])
  const base = tok.decode(context)
  expect(full.startsWith(base)).toBe(true)
  expect(pieces.join('')).toBe(full.slice(base.length))
  for (const p of pieces) expect(p).not.toContain('\uFFFD')
  return pieces
}

describe('incremental detokenizer', async () => {
  const gguf = await loadGgufModel(sharedModel('stories260K/stories260K.gguf'), { weights: false })
  const bpe = createGgufTokenizer(syntheticBpeVocab(null))
  const hfVocab = bpeVocab(320)
  const hfSynthetic = createHfTokenizer(byteLevelTokenizerJson(hfVocab.tokens, hfVocab.merges ?? [], null), {}, { tokenizer: 't', config: 'c' }).tokenizer
  const tiny = loadHfTokenizer(sharedModel('tinystories-656K')).tokenizer
  const text = 'Hi 😀 there, café 中文!\nThe end.'

  it('streams the published llama2.c story exactly', () => {
    const pieces = stream(tok512, [1], PUBLISHED_STORIES260K_IDS)
    expect(pieces.join('').startsWith('Once upon a time')).toBe(true)
  })

  it('streams the published TinyStories ids exactly', () => {
    stream(tiny, [1], PUBLISHED_TINYSTORIES_IDS)
  })

  for (const [name, tok] of [
    ['llama2c', tok512],
    ['spm', gguf.tokenizer],
    ['bpe', bpe],
    ['hf', hfSynthetic]
  ] as const) {
    it(`holds a 4-byte emoji split over byte tokens until it completes (${name})`, () => {
      const ids = tok.encode(text, { addBos: false })
      // the emoji really is split: some single token decodes to an incomplete UTF-8 sequence
      expect(ids.some((id) => tok.decode([id]).includes('\uFFFD'))).toBe(true)
      const context = tok.bosId !== null && name !== 'bpe' && name !== 'hf' ? [tok.bosId] : []
      const pieces = stream(tok, context, ids)
      expect(pieces.some((p) => p.includes('😀'))).toBe(true)
      // and after a prompt that ends mid-word
      const prompt = tok.encode('The', { addBos: name === 'llama2c' || name === 'spm' })
      stream(tok, prompt, tok.encode(' cat sat 😀', { addBos: false }))
    })
  }
})
