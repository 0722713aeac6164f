/**
 * @file The solver's one-sentence explanation: what each phase does and how long it is predicted to take,
 * then how much slower the best alternative device would be, e.g. "Prefill and decode on CPU (12 ms per
 * 128-token chunk, 2.5 ms per token); the software GPU would be 9× slower for both."
 */
import type { DeviceInfo } from '../devices'
import { deviceLabel, listWords, sentence } from './device-pick'
import type { MatmulGroup } from './placement'

/** How one matmul group is placed in a tensor-split phase: wholly on a or b, or partitioned. */
export type MatmulChoice = { readonly on: 'a' | 'b' } | { readonly by: 'rows'; readonly ratio: number } | { readonly by: 'sequence'; readonly standardLength: number }

/** The family and parameters of a phase placement the solver considered. */
export type PhaseShape =
  | { readonly kind: 'single'; readonly device: string }
  | { readonly kind: 'layer-split'; readonly matmul: string; readonly rest: string }
  | { readonly kind: 'tensor-split'; readonly a: string; readonly b: string; readonly rest: string; readonly choices: Readonly<Record<MatmulGroup, MatmulChoice>> }

/** A phase's chosen shape and predicted time. */
export interface PhaseOutcome {
  readonly shape: PhaseShape
  readonly ms: number
}

/** The single-device alternative the winner is compared with. */
export interface Alternative {
  readonly device: string
  readonly prefillMs: number
  readonly decodeMs: number
  /** true: phrase it "everything on the X" (the solution is not X alone); false: "the X" */
  readonly everything: boolean
}

/** "0.42 ms", "3.1 ms", "12 ms". */
export function formatMs(ms: number): string {
  if (ms < 1) return `${ms.toFixed(2)} ms`
  if (ms < 10) return `${ms.toFixed(1)} ms`
  return `${Math.round(ms)} ms`
}

/** "1.4×", "9×" (one decimal below 10). */
function formatRatio(r: number): string {
  return r >= 9.95 ? `${Math.round(r)}×` : `${r.toFixed(1)}×`
}

/** "on CPU", "with matmuls on NPU and the rest on GPU", ... */
export function describeShape(shape: PhaseShape, devices: readonly DeviceInfo[]): string {
  const name = (id: string): string => `the ${deviceLabel(id, devices)}`
  if (shape.kind === 'single') return `on ${name(shape.device)}`
  if (shape.kind === 'layer-split') return `with matmuls on ${name(shape.matmul)} and the rest on ${name(shape.rest)}`
  // matmul groups not on the rest device, grouped by identical phrasing:
  // "qkv and ffn split by rows (60% on the GPU, 40% on the CPU), lm-head on the NPU"
  const phrases = new Map<string, string[]>()
  for (const [group, choice] of Object.entries(shape.choices)) {
    let phrase: string
    if ('on' in choice) {
      const id = choice.on === 'a' ? shape.a : shape.b
      if (id === shape.rest) continue
      phrase = `on ${name(id)}`
    } else if (choice.by === 'rows') {
      phrase = `split by rows (${Math.round(choice.ratio * 100)}% on ${name(shape.a)}, ${Math.round((1 - choice.ratio) * 100)}% on ${name(shape.b)})`
    } else {
      phrase = `split by sequence (${name(shape.a)} takes ${choice.standardLength} tokens of each chunk, ${name(shape.b)} the rest)`
    }
    phrases.set(phrase, [...(phrases.get(phrase) ?? []), group])
  }
  const parts = [...phrases].map(([phrase, groups]) => `${listWords(groups)} ${phrase}`)
  if (parts.length === 0) return `on ${name(shape.rest)}`
  return `with ${listWords(parts)}, everything else on ${name(shape.rest)}`
}

/** The one-sentence explanation of a solution. */
export function explainSolution(prefill: PhaseOutcome, decode: PhaseOutcome, chunkTokens: number, alternative: Alternative | null, devices: readonly DeviceInfo[]): string {
  const perChunk = `${formatMs(prefill.ms)} per ${chunkTokens}-token chunk`
  const perToken = `${formatMs(decode.ms)} per token`
  const p = describeShape(prefill.shape, devices)
  const d = describeShape(decode.shape, devices)
  const clauses = p === d ? [`prefill and decode ${p} (${perChunk}, ${perToken})`] : [`prefill ${p} (${perChunk})`, `decode ${d} (${perToken})`]
  if (alternative === null) {
    clauses.push('no other profiled device can run the whole model to compare with')
  } else {
    const label = `the ${deviceLabel(alternative.device, devices)}`
    const who = alternative.everything ? `everything on ${label}` : label
    const rp = formatRatio(alternative.prefillMs / Math.max(prefill.ms, Number.MIN_VALUE))
    const rd = formatRatio(alternative.decodeMs / Math.max(decode.ms, Number.MIN_VALUE))
    const same = '1.0×'
    if (rp === rd) clauses.push(rp === same ? `${who} would be about as fast` : `${who} would be ${rp} slower for both`)
    else if (rd === same) clauses.push(`${who} would be ${rp} slower for prefill and as fast for decode`)
    else if (rp === same) clauses.push(`${who} would be as fast for prefill and ${rd} slower for decode`)
    else clauses.push(`${who} would be ${rp} slower for prefill and ${rd} for decode`)
  }
  return sentence(clauses) ?? ''
}
