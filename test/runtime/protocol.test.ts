import { describe, expect, it } from 'vitest'
import { ProtocolError } from '../../main/engine/runtime/errors'
import { parseDeviceMessage } from '../../main/engine/runtime/hetero/device-protocol'
import { parseWorkerInit, parseWorkerRequest, parseWorkerResponse, requestIdOf } from '../../main/engine/runtime/model-worker/protocol'
import { loadModel } from '../../main/engine/model'
import { randomModel } from '../graph/random-model'
import { sharedModel } from '../helpers/paths'

describe('worker request validation', () => {
  it('accepts the three request kinds', () => {
    expect(parseWorkerRequest({ type: 'forward', id: 1, tokens: [1, 2], pos: 0 })).toEqual({ type: 'forward', id: 1, tokens: [1, 2], pos: 0 })
    expect(parseWorkerRequest({ type: 'truncate', id: 2, pos: 3 })).toEqual({ type: 'truncate', id: 2, pos: 3 })
    expect(parseWorkerRequest({ type: 'dispose', id: 3 })).toEqual({ type: 'dispose', id: 3 })
  })

  it.each([
    ['not an object', 42],
    ['null', null],
    ['array', [1]],
    ['unknown type', { type: 'explode', id: 1 }],
    ['missing id', { type: 'dispose' }],
    ['fractional id', { type: 'dispose', id: 1.5 }],
    ['negative pos', { type: 'truncate', id: 1, pos: -1 }],
    ['string pos', { type: 'truncate', id: 1, pos: '3' }],
    ['tokens not an array', { type: 'forward', id: 1, tokens: 'hello', pos: 0 }],
    ['empty tokens', { type: 'forward', id: 1, tokens: [], pos: 0 }],
    ['non-integer token', { type: 'forward', id: 1, tokens: [1, 2.5], pos: 0 }],
    ['negative token', { type: 'forward', id: 1, tokens: [-1], pos: 0 }],
    ['token as string', { type: 'forward', id: 1, tokens: ['1'], pos: 0 }]
  ])('rejects %s', (_label, message) => {
    expect(() => parseWorkerRequest(message)).toThrow(ProtocolError)
  })

  it('finds the id of a malformed request so the error can be addressed', () => {
    expect(requestIdOf({ type: 'forward', id: 7, tokens: 'x' })).toBe(7)
    expect(requestIdOf({ id: -1 })).toBeNull()
    expect(requestIdOf('junk')).toBeNull()
  })

  it('validates the init data: the header\'s config and weight layout, limits, the cancel word', async () => {
    const { config, layout } = await loadModel(sharedModel('stories260K/stories260K.gguf'), { weights: false })
    const cancel = new SharedArrayBuffer(4)
    const init = { config, layout, threads: 2, cancel }
    expect(parseWorkerInit(structuredClone(init))).toEqual(init)
    const bad = (patch: Record<string, unknown>): (() => unknown) => () => parseWorkerInit({ ...init, ...patch })
    expect(bad({ config: { ...config, nHeads: 0 } })).toThrow('init.config.nHeads: 0 is out of range')
    expect(bad({ config: { ...config, ropePairing: 'diagonal' } })).toThrow(ProtocolError)
    expect(bad({ layout: { ...layout, finalNorm: { ...layout.finalNorm, file: 1 } } })).toThrow('init.layout.finalNorm.file: 1 is out of range [0, 0]')
    expect(bad({ layout: { ...layout, tokenEmbedding: { ...layout.tokenEmbedding, offset: -4 } } })).toThrow(ProtocolError)
    expect(bad({ layout: { ...layout, layers: [{ ...layout.layers[0], wq: undefined }] } })).toThrow('init.layout.layers[0].wq: expected an object')
    expect(bad({ maxContext: 0 })).toThrow(ProtocolError)
    expect(bad({ cacheDir: 5 })).toThrow(ProtocolError)
    expect(bad({ cancel: undefined })).toThrow('init.cancel: expected a SharedArrayBuffer of one Int32')
    expect(bad({ prefillChunkTokens: 0 })).toThrow(ProtocolError)
  })
})

describe('worker response validation', () => {
  const { config } = randomModel({ seed: 1 })
  const info = { cacheHit: true, compileMs: 1, sessionMs: 2, graphPath: '/g.onnx' }

  it('accepts a ready message within the model\'s context and rejects one past it', () => {
    const ready = parseWorkerResponse({ type: 'ready', contextLength: 16, compileInfo: info, fingerprint: 'ab', kvSource: 'single session on cpu' }, config)
    expect(ready).toMatchObject({ type: 'ready', kvSource: 'single session on cpu', fingerprint: 'ab' })
    expect(() => parseWorkerResponse({ type: 'ready', contextLength: config.contextLength + 1, compileInfo: info, fingerprint: 'ab' }, config)).toThrow(ProtocolError)
    expect(() => parseWorkerResponse({ type: 'ready', contextLength: 16, compileInfo: { ...info, sessionMs: -1 }, fingerprint: 'ab' }, config)).toThrow(ProtocolError)
    expect(() => parseWorkerResponse({ type: 'ready', contextLength: 16, compileInfo: info }, config)).toThrow(ProtocolError)
  })

  it('checks KV snapshot bytes and requests', () => {
    expect(parseWorkerResponse({ type: 'kv', id: 2, data: new Uint8Array(8) }, config)).toMatchObject({ type: 'kv', id: 2 })
    expect(() => parseWorkerResponse({ type: 'kv', id: 2, data: [1, 2] }, config)).toThrow(ProtocolError)
    expect(parseWorkerRequest({ type: 'kv-read', id: 1, start: 0, count: 4, format: 'f16' })).toEqual({ type: 'kv-read', id: 1, start: 0, count: 4, format: 'f16' })
    expect(() => parseWorkerRequest({ type: 'kv-read', id: 1, start: 0, count: 0, format: 'f16' })).toThrow(ProtocolError)
    expect(() => parseWorkerRequest({ type: 'kv-read', id: 1, start: 0, count: 4, format: 'int4' })).toThrow(ProtocolError)
    expect(() => parseWorkerRequest({ type: 'kv-write', id: 1, start: 0, count: 4, format: 'f32', data: 'bytes' })).toThrow(ProtocolError)
    // the device workers' messages for one layer's section
    expect(parseDeviceMessage({ type: 'kv-read', layer: 3, start: 0, count: 4, format: 'i8' })).toEqual({ type: 'kv-read', layer: 3, start: 0, count: 4, format: 'i8' })
    expect(parseDeviceMessage({ type: 'kv-write', layer: 0, start: 2, count: 4, reserve: 9, format: 'f32', data: new Uint8Array(4) })).toMatchObject({ type: 'kv-write', layer: 0, reserve: 9 })
    expect(() => parseDeviceMessage({ type: 'kv-read', layer: -1, start: 0, count: 4, format: 'f32' })).toThrow(ProtocolError)
    expect(() => parseDeviceMessage({ type: 'kv-write', layer: 0, start: 0, count: 4, reserve: 0, format: 'f32', data: [0, 0] })).toThrow(ProtocolError)
  })

  it('accepts load progress with a known stage and done within total', () => {
    expect(parseWorkerResponse({ type: 'progress', progress: { stage: 'compiling', done: 3, total: 9 } }, config)).toEqual({ type: 'progress', progress: { stage: 'compiling', done: 3, total: 9 } })
    for (const progress of [{ stage: 'baking', done: 0, total: 0 }, { stage: 'reading', done: 10, total: 9 }, { stage: 'reading', done: -1, total: 9 }, { stage: 'preparing', done: 0 }]) {
      expect(() => parseWorkerResponse({ type: 'progress', progress }, config)).toThrow(ProtocolError)
    }
  })

  it('checks logits are a Float32Array of vocabulary length', () => {
    const vocab = config.vocabSize
    expect(parseWorkerResponse({ type: 'logits', id: 1, logits: new Float32Array(vocab) }, config).type).toBe('logits')
    expect(() => parseWorkerResponse({ type: 'logits', id: 1, logits: new Float32Array(vocab - 1) }, config)).toThrow(ProtocolError)
    expect(() => parseWorkerResponse({ type: 'logits', id: 1, logits: Array.from({ length: vocab }, () => 0) }, config)).toThrow(ProtocolError)
    expect(() => parseWorkerResponse({ type: 'error', id: 1, error: 'boom' }, config)).toThrow(ProtocolError)
  })
})
