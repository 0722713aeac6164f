/**
 * @file Picks the tokenizer for a GGUF vocabulary: SentencePiece-style for `tokenizer.ggml.model =
 * 'llama'`, byte-level BPE for 'gpt2', and works out the extra end-of-turn ids chat models stop on.
 */
import { createBpeTokenizer } from './bpe'
import { createSpmTokenizer } from './spm'
import type { GgufVocab, Tokenizer } from './types'

/** Turn-ending tokens of common chat vocabularies (ChatML, Llama 3, Gemma); stop ids when present. */
const END_OF_TURN_TEXTS: readonly string[] = [
  '<|im_end|>',
  '<|eot_id|>',
  '<|eom_id|>',
  '<|end_of_text|>',
  '<|endoftext|>',
  '<end_of_turn>'
]

/** Ids besides eos that end a turn: the declared eot id and, for gpt2 vocabularies, well-known end tokens. */
function extraStops(vocab: GgufVocab): number[] {
  const ids = new Set<number>()
  if (vocab.eotId !== null) ids.add(vocab.eotId)
  if (vocab.model === 'gpt2') {
    const wanted = new Set(END_OF_TURN_TEXTS)
    vocab.tokens.forEach((text, id) => {
      if (wanted.has(text)) ids.add(id)
    })
  }
  if (vocab.eosId !== null) ids.delete(vocab.eosId)
  return [...ids].sort((a, b) => a - b)
}

/** The tokenizer for a validated GGUF vocabulary. */
export function createGgufTokenizer(vocab: GgufVocab): Tokenizer {
  const stops = extraStops(vocab)
  return vocab.model === 'llama' ? createSpmTokenizer(vocab, stops) : createBpeTokenizer(vocab, stops)
}
