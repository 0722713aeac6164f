/** @file The tokenizer contract shared by llama2.c, GGUF (SentencePiece-style and GPT-2 BPE) and HF tokenizers. */

export interface EncodeOptions {
  /** prepend BOS (default: the tokenizer's own setting) */
  readonly addBos?: boolean
  /** recognise special-token text such as "<|im_start|>" as single ids (default true) */
  readonly parseSpecial?: boolean
}

export interface DecodeOptions {
  /** drop control/special tokens from the text (default true) */
  readonly skipSpecialTokens?: boolean
}

/**
 * Text <-> ids. `decode` treats `ids` as the start of a sequence (so the SentencePiece leading space after
 * BOS is dropped the way each reference does). Incremental detokenization is built on top of decode.
 */
export interface Tokenizer {
  readonly kind: 'llama2c' | 'spm' | 'bpe' | 'hf'
  readonly vocabSize: number
  readonly bosId: number | null
  readonly eosId: number | null
  /** ids that end a chat turn besides eos (e.g. <|im_end|>, <|eot_id|>) */
  readonly extraStopIds: readonly number[]
  encode(text: string, options?: EncodeOptions): number[]
  decode(ids: readonly number[], options?: DecodeOptions): string
  /** text of one token as stored in the vocabulary (for display and debugging) */
  tokenText(id: number): string
  isSpecial(id: number): boolean
}

/** Vocabulary as GGUF stores it under tokenizer.ggml.* (already validated by the GGUF reader). */
export interface GgufVocab {
  /** tokenizer.ggml.model: 'llama' = SentencePiece-style scores, 'gpt2' = byte-level BPE with merges */
  readonly model: 'llama' | 'gpt2'
  /** tokenizer.ggml.pre (e.g. 'llama-bpe', 'qwen2', 'default'); selects the pre-tokenizer regex */
  readonly pre: string | null
  readonly tokens: readonly string[]
  readonly scores: Float32Array | null
  /** 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte */
  readonly tokenTypes: Int32Array | null
  readonly merges: readonly string[] | null
  readonly bosId: number | null
  readonly eosId: number | null
  readonly unkId: number | null
  readonly eotId: number | null
  readonly addBos: boolean
  /** tokenizer.ggml.add_space_prefix (SentencePiece dummy prefix; default true for 'llama') */
  readonly addSpacePrefix: boolean
}
