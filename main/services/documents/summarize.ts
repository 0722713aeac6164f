/**
 * @file Summarizing a text longer than the model's context (issue #15), map-reduce: the text is cut into parts that
 * fit the context with room for the instructions and the summary (split.ts), each part is summarized (map), and the
 * partial summaries are joined and summarized again — cut into parts again while they do not fit in one prompt —
 * until one prompt holds them all (reduce), whose summary streams to the caller.
 *
 * Each summary is capped at a quarter of a part's budget, so every reduce level has at most a quarter of the tokens
 * of the level before: the recursion ends, in about log4(parts) levels, whatever the model writes.
 */
import type { ChatMessage, GenerationStats, TextModel } from '../../engine'
import { splitByTokens } from './split'

/**
 * What the pipeline needs from a model (a TextModel adapter in the service, or another server's model). A prompt is
 * whatever the model takes (token ids here; the messages themselves for another server) whose `length` is its tokens.
 */
export interface SummaryModel<P extends { readonly length: number } = readonly number[]> {
  readonly contextLength: number
  /** tokens of a text as a prompt part (no BOS) */
  countTokens(text: string): number
  /** the prompt for `messages`: the chat template when the model has one, a plain prompt otherwise */
  prompt(messages: readonly ChatMessage[]): P
  /** a greedy continuation of at most `maxTokens` tokens; `onText` gets each piece as it streams */
  generate(prompt: P, maxTokens: number, signal: AbortSignal, onText?: (text: string) => void): Promise<string>
}

/** Where a summary is: map steps (`level` 0) or reduce steps; `done` of `total` steps known so far. */
export interface SummaryProgress {
  readonly done: number
  readonly total: number
  readonly level: number
  /** time left at the average pace of the steps so far (ms), null before the first step ends */
  readonly etaMs: number | null
}

/** The result: the summary and how it was made. */
export interface SummaryResult {
  readonly summary: string
  /** map steps: the parts the text was cut into */
  readonly parts: number
  /** every model call, map and reduce */
  readonly steps: number
  /** reduce levels above the map (0: the text fit in one prompt) */
  readonly levels: number
}

export interface SummarizeOptions {
  /** most tokens of the final summary */
  readonly maxSummaryTokens: number
  readonly signal: AbortSignal
  readonly onProgress?: (p: SummaryProgress) => void
  /** each piece of the final summary as it streams */
  readonly onText?: (text: string) => void
  /** clock for the time estimate (default performance.now) */
  readonly nowMs?: () => number
}

/** Deepest reduce recursion tried (with the quarter cap, 12 levels cover 4^12 ≈ 16 million parts). */
export const MAX_REDUCE_LEVELS = 12
/** Smallest part budget (tokens) worth summarizing; below it the model's context is too small for the task. */
export const MIN_PART_TOKENS = 64

const SYSTEM = 'You write faithful, concise summaries of documents. Keep names, numbers and conclusions.'
const PART_INSTRUCTION = 'Summarize this part of a longer document in a few sentences.'
const FINAL_INSTRUCTION = 'Summarize the following document.'
const COMBINE_INSTRUCTION = 'These are summaries of consecutive parts of one document. Combine them into one summary of the whole document.'

/** The messages asking for a summary of `text`. */
export function summaryMessages(instruction: string, text: string): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: `${instruction}\n\n${text}` }
  ]
}

/**
 * Tokens of text one prompt may hold (the context less the longest instructions and the summary), and the cap on a
 * part's summary; RangeError when the context is too small for the task.
 */
export function summaryBudget<P extends { readonly length: number }>(model: Pick<SummaryModel<P>, 'contextLength' | 'prompt'>, maxSummaryTokens: number): { partTokens: number; partSummaryTokens: number } {
  const instructionTokens = model.prompt(summaryMessages(COMBINE_INSTRUCTION, '')).length
  const partTokens = model.contextLength - instructionTokens - maxSummaryTokens
  if (partTokens < MIN_PART_TOKENS) {
    throw new RangeError(`the model's context (${model.contextLength} tokens) leaves ${Math.max(0, partTokens)} for the text after the instructions and a ${maxSummaryTokens}-token summary; at least ${MIN_PART_TOKENS} are needed`)
  }
  return { partTokens, partSummaryTokens: Math.max(16, Math.min(maxSummaryTokens, Math.floor(partTokens / 4))) }
}

/** Summarizes `text` (already extracted and cleaned) with `model`. Rejects with the signal's reason when cancelled. */
export async function summarize<P extends { readonly length: number }>(text: string, model: SummaryModel<P>, options: SummarizeOptions): Promise<SummaryResult> {
  const now = options.nowMs ?? (() => performance.now())
  const { partTokens, partSummaryTokens } = summaryBudget(model, options.maxSummaryTokens)
  const started = now()
  let done = 0
  let total = 0
  let steps = 0
  const report = (level: number): void => {
    const elapsed = now() - started
    options.onProgress?.({ done, total, level, etaMs: done === 0 ? null : (elapsed / done) * (total - done) })
  }
  const step = async (instruction: string, body: string, maxTokens: number, level: number, stream: boolean): Promise<string> => {
    options.signal.throwIfAborted()
    const prompt = model.prompt(summaryMessages(instruction, body))
    const out = await model.generate(prompt, maxTokens, options.signal, stream ? options.onText : undefined)
    steps++
    done++
    report(level)
    return out.trim()
  }

  let pieces = splitByTokens(text, (t) => model.countTokens(t), partTokens)
  const parts = pieces.length
  if (parts <= 1) {
    total = 1
    report(0)
    const summary = await step(FINAL_INSTRUCTION, text.trim(), options.maxSummaryTokens, 0, true)
    return { summary, parts: 1, steps, levels: 0 }
  }
  // map, then reduce levels until the partial summaries fit one prompt
  total = parts + 1
  report(0)
  let level = 0
  for (;;) {
    const summaries: string[] = []
    for (const p of pieces) summaries.push(await step(level === 0 ? PART_INSTRUCTION : COMBINE_INSTRUCTION, p.trim(), partSummaryTokens, level, false))
    level++
    const joined = summaries.filter((s) => s !== '').join('\n\n')
    if (model.countTokens(joined) <= partTokens || level >= MAX_REDUCE_LEVELS) {
      const summary = await step(COMBINE_INSTRUCTION, joined, options.maxSummaryTokens, level, true)
      return { summary, parts, steps, levels: level }
    }
    pieces = splitByTokens(joined, (t) => model.countTokens(t), partTokens)
    // the next level's pieces, then the final combine
    total = done + pieces.length + 1
    report(level)
  }
}

/** What the app adds to a TextModel's calls: its pace between tokens (tests watch a summary stream), each token (the live tokens/s), each call's stats. */
export interface TextSummaryOptions {
  readonly pace?: () => Promise<void>
  readonly onToken?: () => void
  readonly onStats?: (stats: GenerationStats) => void
}

/**
 * A TextModel as the pipeline's model: its chat template when it has one, else the instruction and text as a plain
 * prompt ending in "Summary:"; greedy decoding (a summary should not vary from run to run).
 */
export function textSummaryModel(model: TextModel, options: TextSummaryOptions = {}): SummaryModel {
  const tok = model.info.tokenizer
  return {
    contextLength: model.contextLength,
    countTokens: (text) => tok.encode(text, { addBos: false }).length,
    prompt: (messages) =>
      model.info.chatTemplate !== null
        ? model.encodeChat(messages)
        : model.encodePrompt(`${messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n\n')}\n\nSummary:`),
    async generate(promptIds, maxTokens, signal, onText) {
      const g = model.generate({ promptIds, maxTokens, signal, sampling: { temperature: 0 }, ...(options.pace !== undefined && { pace: options.pace }) })
      for await (const e of g) {
        options.onToken?.()
        if (e.text !== '') onText?.(e.text)
      }
      const r = await g.result
      options.onStats?.(r.stats)
      if (r.stopReason === 'aborted') signal.throwIfAborted()
      return r.text
    }
  }
}

/**
 * The stats of several generations as one (a summary's map and reduce calls): token counts summed, speeds over the
 * summed times, device busy time summed per device; `ttftMs` is the caller's (the wait before the text starts).
 */
export function combineStats(all: readonly GenerationStats[], ttftMs: number): GenerationStats {
  const sum = (f: (s: GenerationStats) => number): number => all.reduce((n, s) => n + f(s), 0)
  const prefillSec = sum((s) => (s.prefillTokensPerSec > 0 ? s.prefillTokens / s.prefillTokensPerSec : 0))
  const decodeSec = sum((s) => (s.decodeTokensPerSec > 0 ? s.generatedTokens / s.decodeTokensPerSec : 0))
  const devices = new Map<string, { id: string; busyMs: number; runs: number }>()
  for (const d of all.flatMap((s) => s.devices)) {
    const seen = devices.get(d.id) ?? { id: d.id, busyMs: 0, runs: 0 }
    devices.set(d.id, { id: d.id, busyMs: seen.busyMs + d.busyMs, runs: seen.runs + d.runs })
  }
  const prefillTokens = sum((s) => s.prefillTokens)
  const generatedTokens = sum((s) => s.generatedTokens)
  return {
    promptTokens: sum((s) => s.promptTokens),
    prefillTokens,
    reusedTokens: sum((s) => s.reusedTokens),
    restoredTokens: sum((s) => s.restoredTokens),
    generatedTokens,
    ttftMs,
    prefillTokensPerSec: prefillSec > 0 ? prefillTokens / prefillSec : 0,
    decodeTokensPerSec: decodeSec > 0 ? generatedTokens / decodeSec : 0,
    devices: [...devices.values()]
  }
}
