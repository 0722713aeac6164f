/**
 * @file The ggml tensor encodings the engine can read, by ggml type id, with their block geometry.
 * GGUF stores a tensor as rows of blocks; a block holds `blockElems` consecutive values of one row in
 * `blockBytes` bytes (dense types are blocks of one element).
 */
import type { BlockDType, DenseDType } from './types'

/** One supported ggml tensor type. */
export interface GgmlTypeInfo {
  /** ggml_type enum value as stored in GGUF tensor infos */
  readonly id: number
  /** ggml's own name, e.g. "Q4_K" */
  readonly name: string
  /** our encoding name, as used in TensorData */
  readonly encoding: DenseDType | BlockDType
  /** values per block (along the innermost dimension) */
  readonly blockElems: number
  readonly blockBytes: number
}

/** Elements per K-quant super-block (ggml QK_K). */
export const QK_K = 256

/** Supported types: the dense floats and the block formats common in published GGUF files. */
export const GGML_TYPES: readonly GgmlTypeInfo[] = [
  { id: 0, name: 'F32', encoding: 'f32', blockElems: 1, blockBytes: 4 },
  { id: 1, name: 'F16', encoding: 'f16', blockElems: 1, blockBytes: 2 },
  // f16 d + 32 × 4-bit quants
  { id: 2, name: 'Q4_0', encoding: 'q4_0', blockElems: 32, blockBytes: 18 },
  // f16 d + 32 × int8
  { id: 8, name: 'Q8_0', encoding: 'q8_0', blockElems: 32, blockBytes: 34 },
  // f16 d, f16 dmin, 12 bytes of packed 6-bit scales/mins, 128 bytes of 4-bit quants
  { id: 12, name: 'Q4_K', encoding: 'q4_k', blockElems: QK_K, blockBytes: 144 },
  // 128 bytes low nibbles, 64 bytes high 2 bits, 16 int8 scales, f16 d
  { id: 14, name: 'Q6_K', encoding: 'q6_k', blockElems: QK_K, blockBytes: 210 },
  { id: 30, name: 'BF16', encoding: 'bf16', blockElems: 1, blockBytes: 2 }
]

const BY_ID = new Map(GGML_TYPES.map((t) => [t.id, t]))
const BY_ENCODING = new Map(GGML_TYPES.map((t) => [t.encoding, t]))

/**
 * ggml's names for every type id it has defined (ggml.h `enum ggml_type`), so an error can say what a
 * file uses. Ids 4, 5 and 31–33, 36–38 were removed from ggml and are listed with their old names.
 */
const GGML_TYPE_NAMES: readonly string[] = [
  'F32', 'F16', 'Q4_0', 'Q4_1', 'Q4_2 (removed)', 'Q4_3 (removed)', 'Q5_0', 'Q5_1', 'Q8_0', 'Q8_1',
  'Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K', 'Q8_K', 'IQ2_XXS', 'IQ2_XS', 'IQ3_XXS', 'IQ1_S',
  'IQ4_NL', 'IQ3_S', 'IQ2_S', 'IQ4_XS', 'I8', 'I16', 'I32', 'I64', 'F64', 'IQ1_M',
  'BF16', 'Q4_0_4_4 (removed)', 'Q4_0_4_8 (removed)', 'Q4_0_8_8 (removed)', 'TQ1_0', 'TQ2_0',
  'IQ4_NL_4_4 (removed)', 'IQ4_NL_4_8 (removed)', 'IQ4_NL_8_8 (removed)', 'MXFP4', 'NVFP4', 'Q1_0', 'Q2_0'
]

/** ggml's name for a type id, or "unknown type N". */
export function ggmlTypeName(id: number): string {
  return GGML_TYPE_NAMES[id] ?? `unknown type ${id}`
}

/** The supported type with this id, or null. */
export function ggmlTypeById(id: number): GgmlTypeInfo | null {
  return BY_ID.get(id) ?? null
}

/** The ggml type that stores one of our encodings. */
export function ggmlTypeByEncoding(encoding: DenseDType | BlockDType): GgmlTypeInfo {
  const t = BY_ENCODING.get(encoding)
  if (!t) throw new Error(`no ggml type for encoding ${encoding}`)
  return t
}

/** Error text for an unsupported type id: names it and lists what is supported. */
export function unsupportedGgmlTypeMessage(id: number): string {
  const supported = GGML_TYPES.map((t) => `${t.name} (${t.id})`).join(', ')
  return `tensor type ${ggmlTypeName(id)} (ggml type ${id}) is not supported; supported types: ${supported}`
}

/**
 * llama.cpp `llama_ftype` names for `general.file_type` (the "mostly" type of a quantized file).
 * Only the ids llama.cpp has defined; others print as "file type N".
 */
const LLAMA_FILE_TYPE_NAMES: ReadonlyMap<number, string> = new Map([
  [0, 'F32'], [1, 'F16'], [2, 'Q4_0'], [3, 'Q4_1'], [7, 'Q8_0'], [8, 'Q5_0'], [9, 'Q5_1'],
  [10, 'Q2_K'], [11, 'Q3_K_S'], [12, 'Q3_K_M'], [13, 'Q3_K_L'], [14, 'Q4_K_S'], [15, 'Q4_K_M'],
  [16, 'Q5_K_S'], [17, 'Q5_K_M'], [18, 'Q6_K'], [19, 'IQ2_XXS'], [20, 'IQ2_XS'], [21, 'Q2_K_S'],
  [22, 'IQ3_XS'], [23, 'IQ3_XXS'], [24, 'IQ1_S'], [25, 'IQ4_NL'], [26, 'IQ3_S'], [27, 'IQ3_M'],
  [28, 'IQ2_S'], [29, 'IQ2_M'], [30, 'IQ4_XS'], [31, 'IQ1_M'], [32, 'BF16'], [36, 'TQ1_0'],
  [37, 'TQ2_0'], [38, 'MXFP4_MOE']
])

/** Human name of a `general.file_type` value, e.g. 15 -> "Q4_K_M". */
export function llamaFileTypeName(fileType: number): string {
  return LLAMA_FILE_TYPE_NAMES.get(fileType) ?? `file type ${fileType}`
}
