/**
 * @file UTF-8-safe streaming detokenizer for any Tokenizer. Text is the difference between decoding a
 * short window that ends at the last emitted token and the same window plus the new tokens (the prefix /
 * read offsets of HF text-generation-inference), so leading-space rules see real left context. Output
 * ending in U+FFFD is held back until the multi-byte character completes.
 */
import type { DecodeOptions, Tokenizer } from './types'

/** Streams text for generated ids; `push` returns newly completed text ('' if none), `flush` the rest. */
export interface Detokenizer {
  push(id: number): string
  flush(): string
}

/** Tokens of left context decoded before the new ones (enough for every leading-space rule we know). */
const WINDOW_TOKENS = 6
const REPLACEMENT_CHAR = '\uFFFD'

/**
 * Creates a detokenizer continuing after `contextIds` (the prompt). The concatenation of all pushes and
 * the flush equals decode(context + generated) with decode(context) removed from its front.
 */
export function createDetokenizer(
  tokenizer: Tokenizer,
  contextIds: readonly number[],
  options: DecodeOptions = {}
): Detokenizer {
  const ids: number[] = [...contextIds]
  const decode = (from: number, to = ids.length): string => tokenizer.decode(ids.slice(from, to), options)
  /** ids[prefix, read) were already emitted and serve as left context; ids[read, ...) are pending */
  let read = ids.length
  let prefix = Math.max(0, read - WINDOW_TOKENS)
  const contextText = decode(0)
  let emitted = ''

  /** Widens the window left while it decodes to nothing, so "first piece of a sequence" rules do not fire. */
  const prefixText = (): string => {
    let text = decode(prefix, read)
    while (text === '' && prefix > 0) {
      prefix = Math.max(0, prefix - WINDOW_TOKENS)
      text = decode(prefix, read)
    }
    return text
  }

  /** Slow exact path: everything decoded from the start, minus the context and what was already emitted. */
  const catchUp = (): string => {
    const full = decode(0)
    const expected = full.startsWith(contextText) ? full.slice(contextText.length) : full
    return expected.startsWith(emitted) ? expected.slice(emitted.length) : ''
  }

  const advance = (text: string): string => {
    emitted += text
    prefix = Math.max(0, ids.length - WINDOW_TOKENS)
    read = ids.length
    return text
  }

  return {
    push(id: number): string {
      ids.push(id)
      const before = prefixText()
      const after = decode(prefix)
      if (after.length <= before.length || after.endsWith(REPLACEMENT_CHAR)) return ''
      // A tokenizer whose decode is not prefix-stable for this window: fall back to the exact path.
      if (!after.startsWith(before)) {
        const text = catchUp()
        return text.endsWith(REPLACEMENT_CHAR) ? '' : advance(text)
      }
      return advance(after.slice(before.length))
    },
    flush(): string {
      if (read === ids.length) return ''
      const before = prefixText()
      const after = decode(prefix)
      return advance(after.startsWith(before) ? after.slice(before.length) : catchUp())
    }
  }
}
