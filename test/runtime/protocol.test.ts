import { describe, expect, it } from 'vitest'
import { ProtocolError } from '../../main/engine/runtime/errors'
import { parseWorkerInit, parseWorkerRequest, parseWorkerResponse, requestIdOf } from '../../main/engine/runtime/model-worker/protocol'
import { randomModel } from '../graph/random-model'

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

  it('validates the init data', () => {
    const cancel = new SharedArrayBuffer(4)
    expect(parseWorkerInit({ modelPath: '/m.gguf', threads: 2, cancel })).toEqual({ modelPath: '/m.gguf', threads: 2, cancel })
    expect(() => parseWorkerInit({ modelPath: '', cancel })).toThrow(ProtocolError)
    expect(() => parseWorkerInit({ modelPath: '/m', maxContext: 0, cancel })).toThrow(ProtocolError)
    expect(() => parseWorkerInit({ modelPath: '/m', cacheDir: 5, cancel })).toThrow(ProtocolError)
    expect(() => parseWorkerInit({ modelPath: '/m' })).toThrow('init.cancel: expected a SharedArrayBuffer of one Int32')
    expect(() => parseWorkerInit({ modelPath: '/m', cancel, prefillChunkTokens: 0 })).toThrow(ProtocolError)
  })
})

describe('worker response validation', () => {
  const { config } = randomModel({ seed: 1 })
  const info = { cacheHit: true, compileMs: 1, sessionMs: 2, graphPath: '/g.onnx' }

  it('accepts a ready message with a valid config and rejects a tampered one', () => {
    const ready = parseWorkerResponse({ type: 'ready', config, contextLength: 16, compileInfo: info }, null)
    expect(ready.type).toBe('ready')
    expect(() => parseWorkerResponse({ type: 'ready', config: { ...config, nHeads: 0 }, contextLength: 16, compileInfo: info }, null)).toThrow(ProtocolError)
    expect(() => parseWorkerResponse({ type: 'ready', config: { ...config, ropePairing: 'diagonal' }, contextLength: 16, compileInfo: info }, null)).toThrow(ProtocolError)
    expect(() => parseWorkerResponse({ type: 'ready', config, contextLength: config.contextLength + 1, compileInfo: info }, null)).toThrow(ProtocolError)
  })

  it('checks logits are a Float32Array of vocabulary length', () => {
    expect(parseWorkerResponse({ type: 'logits', id: 1, logits: new Float32Array(5) }, 5).type).toBe('logits')
    expect(() => parseWorkerResponse({ type: 'logits', id: 1, logits: new Float32Array(4) }, 5)).toThrow(ProtocolError)
    expect(() => parseWorkerResponse({ type: 'logits', id: 1, logits: [1, 2, 3, 4, 5] }, 5)).toThrow(ProtocolError)
    expect(() => parseWorkerResponse({ type: 'error', id: 1, error: 'boom' }, 5)).toThrow(ProtocolError)
  })
})
