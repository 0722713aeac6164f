/**
 * @file One generation on another server, as the chat, the summaries and the local API need it: the text streamed
 * piece by piece, a stop that keeps the text so far, and what the server reported (its token counts when it sends
 * them — `stream_options.include_usage` — else counts made here, marked as such), timed on this side.
 */
import type { ChatMessage } from '../../engine'
import type { MessageStats } from '../../../preload/api'
import type { SummaryModel } from '../documents/summarize'
import { streamRemoteChat, streamRemoteText, type RemoteChatResult } from './openai-remote'
import type { RemoteTarget } from './servers'

/** The context assumed for a model whose server does not state one (Ollama's /v1/models does not): small on purpose. */
export const ASSUMED_REMOTE_CONTEXT = 4096
/** Characters per token assumed where the server's tokenizer is out of reach: BPE vocabularies average 3.5–4.5 on English; 3 errs towards fitting. */
const CHARS_PER_TOKEN = 3

/** Tokens a text is assumed to take on another server (see CHARS_PER_TOKEN). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN)
}

/** What one request asks for. */
export interface RemoteParams {
  readonly maxTokens: number
  readonly temperature: number
  readonly topP: number
  readonly seed: number | null
  readonly stop: readonly string[]
}

/** How one request went. */
export interface RemoteRun {
  readonly text: string
  /** stopped by the signal: `text` is what came before */
  readonly aborted: boolean
  readonly finishReason: 'stop' | 'length'
  readonly promptTokens: number
  readonly completionTokens: number
  /** the token counts are the server's (else counted here: characters for the prompt, pieces for the reply) */
  readonly usageReported: boolean
  /** from the request to the first piece of text (ms); the whole time when none came */
  readonly ttftMs: number
  readonly totalMs: number
}

/** Runs a chat (`messages`) or text (`prompt`) completion on the target; `onPiece` gets the text as it streams. */
export async function runRemote(
  target: RemoteTarget,
  input: { readonly messages: readonly ChatMessage[] } | { readonly prompt: string },
  params: RemoteParams,
  signal: AbortSignal,
  onPiece: (text: string) => void,
  nowMs: () => number
): Promise<RemoteRun> {
  const started = nowMs()
  let firstMs: number | null = null
  let text = ''
  let pieces = 0
  const onText = (piece: string): void => {
    firstMs ??= nowMs()
    text += piece
    pieces++
    onPiece(piece)
  }
  const request = { model: target.model, ...params }
  let result: RemoteChatResult | null = null
  try {
    result =
      'messages' in input
        ? await streamRemoteChat(target.server, { ...request, messages: input.messages.map((m) => ({ role: m.role, content: m.content })) }, onText, { signal, stallMs: target.stallMs })
        : await streamRemoteText(target.server, { ...request, prompt: input.prompt }, onText, { signal, stallMs: target.stallMs })
  } catch (err) {
    if (!signal.aborted) throw err
  }
  const totalMs = nowMs() - started
  const promptChars = 'messages' in input ? input.messages.reduce((n, m) => n + m.content.length, 0) : input.prompt.length
  const usage = result?.usage ?? null
  return {
    text: result?.text ?? text,
    aborted: result === null,
    finishReason: result?.finishReason === 'length' ? 'length' : 'stop',
    promptTokens: usage?.promptTokens ?? Math.ceil(promptChars / CHARS_PER_TOKEN),
    completionTokens: usage?.completionTokens ?? pieces,
    usageReported: usage !== null,
    ttftMs: (firstMs ?? nowMs()) - started,
    totalMs
  }
}

/** The stats of one or several runs (a summary's calls) as a reply stores them; `ttftMs` is the caller's when given. */
export function remoteStats(runs: readonly RemoteRun[], model: string, serverName: string, ttftMs = runs[0]?.ttftMs ?? 0): MessageStats {
  const sum = (f: (r: RemoteRun) => number): number => runs.reduce((n, r) => n + f(r), 0)
  const waitSec = sum((r) => r.ttftMs) / 1000
  const decodeSec = sum((r) => r.totalMs - r.ttftMs) / 1000
  const decodeTokens = sum((r) => Math.max(0, r.completionTokens - 1))
  return {
    ttftMs,
    // the wait for the first token includes the network and the server's queue: a lower bound of its prefill speed
    prefillTokensPerSec: waitSec > 0 ? sum((r) => r.promptTokens) / waitSec : 0,
    decodeTokensPerSec: decodeSec > 0 ? decodeTokens / decodeSec : 0,
    promptTokens: sum((r) => r.promptTokens),
    generatedTokens: sum((r) => r.completionTokens),
    model,
    devices: [],
    server: { name: serverName, usageReported: runs.length > 0 && runs.every((r) => r.usageReported) }
  }
}

/** A prompt for another server: the messages, and the tokens they are assumed to take. */
export interface RemotePrompt {
  readonly messages: readonly ChatMessage[]
  readonly length: number
}

/**
 * The summary pipeline's model on another server: greedy, its context as the server states it (else
 * ASSUMED_REMOTE_CONTEXT), token counts estimated; `onRun` gets each call's run, `onPiece` each streamed piece.
 */
export function remoteSummaryModel(target: RemoteTarget, hooks: { readonly onRun: (run: RemoteRun) => void; readonly onPiece?: () => void; readonly nowMs: () => number }): SummaryModel<RemotePrompt> {
  return {
    contextLength: target.contextLength ?? ASSUMED_REMOTE_CONTEXT,
    countTokens: estimateTokens,
    // a few tokens per message for the server's chat template
    prompt: (messages) => ({ messages, length: messages.reduce((n, m) => n + estimateTokens(m.content) + 8, 0) }),
    async generate(prompt, maxTokens, signal, onText) {
      const run = await runRemote(
        target,
        { messages: prompt.messages },
        { maxTokens, temperature: 0, topP: 1, seed: null, stop: [] },
        signal,
        (piece) => {
          hooks.onPiece?.()
          onText?.(piece)
        },
        hooks.nowMs
      )
      hooks.onRun(run)
      if (run.aborted) signal.throwIfAborted()
      return run.text
    }
  }
}

/**
 * The newest messages that fit the model's stated context with room for the reply (estimated tokens); the whole
 * conversation when the server states no context (it then says itself when the conversation is too long).
 */
export function remoteHistory(messages: readonly ChatMessage[], contextLength: number | null, replyTokens: number): ChatMessage[] {
  if (contextLength === null) return [...messages]
  const system = messages.filter((m) => m.role === 'system')
  const turns = messages.filter((m) => m.role !== 'system')
  let budget = contextLength - Math.min(replyTokens, Math.floor(contextLength / 2)) - system.reduce((n, m) => n + estimateTokens(m.content) + 8, 0)
  let first = turns.length
  while (first > 0) {
    const cost = estimateTokens(turns[first - 1].content) + 8
    // the last message always goes: the server says when even that is too long
    if (cost > budget && first < turns.length) break
    budget -= cost
    first--
  }
  return [...system, ...turns.slice(first)]
}
