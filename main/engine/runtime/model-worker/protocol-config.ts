/**
 * @file Validates a ModelConfig that arrived over the worker boundary (structured clone gives plain data
 * of unknown shape): every field checked for type and range, nothing cast.
 */
import { ProtocolError } from '../errors'
import type { Architecture, Llama3RopeScaling, ModelConfig, RopePairing } from '../../model'

/** Largest dimension / count accepted in a config on the wire. */
export const MAX_CONFIG_DIM = 1 << 24

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function dimField(o: Record<string, unknown>, key: string): number {
  const v = o[key]
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_CONFIG_DIM) throw new ProtocolError(`config.${key} must be an integer in [1, ${MAX_CONFIG_DIM}]`)
  return v
}

function positiveField(o: Record<string, unknown>, key: string): number {
  const v = o[key]
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new ProtocolError(`config.${key} must be a positive number`)
  return v
}

function boolField(o: Record<string, unknown>, key: string): boolean {
  const v = o[key]
  if (typeof v !== 'boolean') throw new ProtocolError(`config.${key} must be a boolean`)
  return v
}

function architecture(v: unknown): Architecture {
  if (v === 'llama' || v === 'qwen2') return v
  throw new ProtocolError(`config.architecture must be 'llama' or 'qwen2', got ${String(v)}`)
}

function pairing(v: unknown): RopePairing {
  if (v === 'adjacent' || v === 'rotate-half') return v
  throw new ProtocolError(`config.ropePairing must be 'adjacent' or 'rotate-half', got ${String(v)}`)
}

function scaling(v: unknown): Llama3RopeScaling | null {
  if (v === null) return null
  if (!isRecord(v) || v.type !== 'llama3') throw new ProtocolError("config.ropeScaling must be null or { type: 'llama3', ... }")
  return {
    type: 'llama3',
    factor: positiveField(v, 'factor'),
    lowFreqFactor: positiveField(v, 'lowFreqFactor'),
    highFreqFactor: positiveField(v, 'highFreqFactor'),
    originalContextLength: dimField(v, 'originalContextLength')
  }
}

function freqFactors(v: unknown, ropeDim: number): number[] | null {
  if (v === null) return null
  if (!Array.isArray(v) || v.length !== ropeDim / 2) throw new ProtocolError(`config.ropeFreqFactors must be null or ${ropeDim / 2} numbers`)
  const out: number[] = []
  for (const f of v) {
    if (typeof f !== 'number' || !Number.isFinite(f) || f <= 0) throw new ProtocolError('config.ropeFreqFactors must hold positive numbers')
    out.push(f)
  }
  return out
}

/** Validates a ModelConfig received across a boundary. */
export function parseModelConfig(v: unknown): ModelConfig {
  if (!isRecord(v)) throw new ProtocolError('config must be an object')
  const ropeDim = dimField(v, 'ropeDim')
  return {
    architecture: architecture(v.architecture),
    dim: dimField(v, 'dim'),
    hiddenDim: dimField(v, 'hiddenDim'),
    nLayers: dimField(v, 'nLayers'),
    nHeads: dimField(v, 'nHeads'),
    nKvHeads: dimField(v, 'nKvHeads'),
    headDim: dimField(v, 'headDim'),
    vocabSize: dimField(v, 'vocabSize'),
    contextLength: dimField(v, 'contextLength'),
    normEps: positiveField(v, 'normEps'),
    ropeTheta: positiveField(v, 'ropeTheta'),
    ropePairing: pairing(v.ropePairing),
    ropeDim,
    ropeScaling: scaling(v.ropeScaling),
    ropeFreqFactors: freqFactors(v.ropeFreqFactors, ropeDim),
    tiedEmbeddings: boolField(v, 'tiedEmbeddings'),
    qkvBias: boolField(v, 'qkvBias')
  }
}
