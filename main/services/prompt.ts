/**
 * @file Turning a conversation into prompt token ids. With a chat template: system prompt + as many of
 * the latest messages as fit, always starting at a user turn. Without one (e.g. the TinyStories models):
 * the last user message as a plain prompt. A prompt that cannot fit is a ContextOverflowError with a
 * message for people; an obviously oversized text is refused before it is tokenized (which costs seconds
 * for a few hundred thousand characters).
 */
import type { ChatMessage, Tokenizer } from '../engine'
import { ApiError } from './errors'

/** What prompt building needs from a model (TextModel satisfies it). */
export interface PromptModel {
  readonly contextLength: number
  readonly info: { readonly chatTemplate: string | null; readonly tokenizer: Tokenizer }
  encodeChat(messages: readonly ChatMessage[]): number[]
  encodePrompt(text: string): number[]
}

/** A prompt ready for generate(). */
export interface BuiltPrompt {
  readonly promptIds: number[]
  readonly mode: 'chat' | 'plain'
  /** oldest messages left out so the rest fits */
  readonly droppedMessages: number
}

const longestTokenCache = new WeakMap<Tokenizer, number>()

/**
 * Characters in the longest vocabulary entry. A text of n characters needs at least n / this many tokens
 * (stored token text is never shorter than what it decodes to: byte tokens read "<0x41>", BPE bytes map
 * to one character each), which bounds the token count without tokenizing.
 */
export function longestTokenChars(tokenizer: Tokenizer): number {
  let longest = longestTokenCache.get(tokenizer)
  if (longest === undefined) {
    longest = 1
    for (let id = 0; id < tokenizer.vocabSize; id++) longest = Math.max(longest, tokenizer.tokenText(id).length)
    longestTokenCache.set(tokenizer, longest)
  }
  return longest
}

function overflow(tokens: number, contextLength: number, atLeast: boolean): ApiError {
  return new ApiError(
    'ContextOverflowError',
    `The message is too long for this model: it needs ${atLeast ? 'at least ' : ''}${tokens} tokens, but the model's ` +
      `context holds ${contextLength}. Shorten the message, or use a model with a longer context.`
  )
}

/**
 * Builds the prompt for answering the last user message of `history` (which must contain one).
 * `reserveTokens` is room kept for the reply when older messages can be dropped to make it.
 */
export function buildPrompt(model: PromptModel, systemPrompt: string, history: readonly ChatMessage[], reserveTokens: number): BuiltPrompt {
  const contextLength = model.contextLength
  const perToken = longestTokenChars(model.info.tokenizer)
  const minTokens = (messages: readonly ChatMessage[]): number =>
    Math.ceil(messages.reduce((n, m) => n + m.content.length, systemPrompt.length) / perToken)
  const userStarts = history.flatMap((m, i) => (m.role === 'user' ? [i] : []))
  const lastUser = userStarts[userStarts.length - 1]
  if (lastUser === undefined) throw new ApiError('ValidationError', 'There is no user message to answer.')

  if (model.info.chatTemplate === null) {
    const text = history[lastUser].content
    const lowerBound = Math.ceil(text.length / perToken)
    if (lowerBound >= contextLength) throw overflow(lowerBound, contextLength, true)
    const promptIds = model.encodePrompt(text)
    if (promptIds.length >= contextLength) throw overflow(promptIds.length, contextLength, false)
    return { promptIds, mode: 'plain', droppedMessages: lastUser }
  }

  const system: ChatMessage[] = systemPrompt.trim() === '' ? [] : [{ role: 'system', content: systemPrompt }]
  const budget = Math.max(1, contextLength - Math.min(reserveTokens, Math.floor(contextLength / 4)))
  const encodeFrom = (start: number): number[] | null => {
    const window = history.slice(start)
    if (minTokens(window) > budget) return null
    const ids = model.encodeChat([...system, ...window])
    return ids.length <= budget ? ids : null
  }
  // Binary search for the earliest user turn from which the rest fits (fewer messages never need more tokens).
  let lo = 0
  let hi = userStarts.length - 1
  let best: { start: number; ids: number[] } | null = null
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const ids = encodeFrom(userStarts[mid])
    if (ids !== null) {
      best = { start: userStarts[mid], ids }
      hi = mid - 1
    } else {
      lo = mid + 1
    }
  }
  if (best !== null) return { promptIds: best.ids, mode: 'chat', droppedMessages: best.start }
  // Not even the last turn fits with room for a reply: use it if it fits at all (the reply stops at the context end).
  const last = [...system, history[lastUser]]
  const lowerBound = minTokens([history[lastUser]])
  if (lowerBound >= contextLength) throw overflow(lowerBound, contextLength, true)
  const promptIds = model.encodeChat(last)
  if (promptIds.length >= contextLength) throw overflow(promptIds.length, contextLength, false)
  return { promptIds, mode: 'chat', droppedMessages: lastUser }
}
