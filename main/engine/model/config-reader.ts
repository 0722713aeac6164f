/**
 * @file Reads a ModelConfig that crossed a boundary (structured clone to a worker gives plain data of
 * unknown shape): every field checked for type and range, nothing cast. The loaders build configs from
 * files with their own format-specific checks; this is for configs that were already built once.
 */
import { FieldReader, readNumber, type Fail } from '../../common/reader'
import type { Architecture, Llama3RopeScaling, ModelConfig, RopePairing } from './types'

/** Largest dimension or count accepted in a config read from the wire. */
export const MAX_CONFIG_DIM = 1 << 24

const ARCHITECTURES: readonly Architecture[] = ['llama', 'qwen2']
const PAIRINGS: readonly RopePairing[] = ['adjacent', 'rotate-half']

function scaling(fail: Fail, r: FieldReader): Llama3RopeScaling | null {
  if (r.raw('ropeScaling') === null) return null
  const s = r.record('ropeScaling')
  s.choice('type', ['llama3'])
  return {
    type: 'llama3',
    factor: s.number('factor', Number.MIN_VALUE, Infinity),
    lowFreqFactor: s.number('lowFreqFactor', Number.MIN_VALUE, Infinity),
    highFreqFactor: s.number('highFreqFactor', Number.MIN_VALUE, Infinity),
    originalContextLength: s.int('originalContextLength', 1, MAX_CONFIG_DIM)
  }
}

function freqFactors(fail: Fail, r: FieldReader, ropeDim: number): number[] | null {
  if (r.raw('ropeFreqFactors') === null) return null
  return r.list('ropeFreqFactors', ropeDim / 2, ropeDim / 2).map((f, i) => readNumber(fail, `${r.at('ropeFreqFactors')}[${i}]`, f, Number.MIN_VALUE, Infinity))
}

/** Reads a ModelConfig at `path`; problems go to `fail` (the boundary's own error). */
export function readModelConfig(fail: Fail, path: string, v: unknown): ModelConfig {
  const r = new FieldReader(fail, path, v)
  const dim = (key: string): number => r.int(key, 1, MAX_CONFIG_DIM)
  const positive = (key: string): number => r.number(key, Number.MIN_VALUE, Infinity)
  const ropeDim = dim('ropeDim')
  return {
    architecture: r.choice('architecture', ARCHITECTURES),
    dim: dim('dim'),
    hiddenDim: dim('hiddenDim'),
    nLayers: dim('nLayers'),
    nHeads: dim('nHeads'),
    nKvHeads: dim('nKvHeads'),
    headDim: dim('headDim'),
    vocabSize: dim('vocabSize'),
    contextLength: dim('contextLength'),
    normEps: positive('normEps'),
    ropeTheta: positive('ropeTheta'),
    ropePairing: r.choice('ropePairing', PAIRINGS),
    ropeDim,
    ropeScaling: scaling(fail, r),
    ropeFreqFactors: freqFactors(fail, r, ropeDim),
    tiedEmbeddings: r.bool('tiedEmbeddings'),
    qkvBias: r.bool('qkvBias')
  }
}
