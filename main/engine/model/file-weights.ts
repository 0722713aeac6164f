/**
 * @file Weights that stay in their files until used. A 1–8B model is 0.8–8.5 GB: reading it into one buffer
 * doubled the memory of every open (the file in JS, then ONNX Runtime's own copy) and cannot even hold a file
 * larger than one ArrayBuffer (4 GiB). Here each tensor reads its bytes when they are asked for and keeps
 * them only while someone holds them (a WeakRef), so the compiler streams the model one tensor at a time,
 * and `rows()` reads just the rows a lookup needs (the runtime's embedding table never enters memory whole).
 * Every read reopens the file and checks it still has the size the header was parsed against: a layout is a
 * claim, and the file may have changed since.
 */
import { closeSync } from 'node:fs'
import { ModelFormatError } from './errors'
import { fillFromFile, openRegularFile } from './file-read'
import { encodedByteLength } from './tensor'
import type { ModelWeights, Tensor, TensorData } from './types'
import { weightsOfLayout, type TensorSource, type WeightLayout } from './weight-layout'

const F32_BYTES = 4

/** One weight file as the header parse saw it. */
interface WeightFile {
  readonly path: string
  readonly sizeBytes: number
}

/** Bytes [offset, offset + length) of the file, in a buffer of their own (byteOffset 0, so f32 views are aligned). */
function readFileRange(file: WeightFile, offset: number, length: number): Uint8Array {
  const { path, sizeBytes } = file
  if (offset < 0 || length < 0 || offset + length > sizeBytes) {
    throw new ModelFormatError(path, `bytes ${offset}..${offset + length} lie outside the file (${sizeBytes} bytes)`)
  }
  const opened = openRegularFile(path, 'model file')
  try {
    if (opened.sizeBytes !== sizeBytes) {
      throw new ModelFormatError(path, `file changed since its header was read (${sizeBytes} bytes then, ${opened.sizeBytes} now)`)
    }
    const out = new Uint8Array(length)
    const got = fillFromFile(opened.fd, out, 0, length, offset)
    if (got < length) throw new ModelFormatError(path, `file shrank while reading (at byte ${offset + got})`)
    return out
  } finally {
    closeSync(opened.fd)
  }
}

/** A value read on first use and kept only while something else holds it. */
class Recallable<T extends object> {
  private ref: WeakRef<T> | null = null
  constructor(private readonly read: () => T) {}
  get(): T {
    const kept = this.ref?.deref()
    if (kept !== undefined) return kept
    const fresh = this.read()
    this.ref = new WeakRef(fresh)
    return fresh
  }
}

/** Bytes per row of a [rows, cols] tensor in `s`'s encoding, or null when a row is not a whole number of blocks/groups. */
function rowBytes(s: TensorSource, cols: number): number | null {
  const e = s.encoding
  if (e.kind === 'int8-groups') return cols % e.groupSize === 0 ? cols : null
  return encodedByteLength(e.dtype, cols)
}

/** The tensor `s` of `file`, reading its bytes on use. */
function fileTensor(s: TensorSource, file: WeightFile): Tensor {
  const e = s.encoding
  const inside = (offset: number, length: number): boolean => offset >= 0 && length >= 0 && offset + length <= file.sizeBytes
  if (!inside(s.offset, s.byteLength)) {
    throw new ModelFormatError(file.path, `tensor ${s.name} lies outside the file (bytes ${s.offset}..${s.offset + s.byteLength} of ${file.sizeBytes})`)
  }
  const cols = s.shape.length === 0 ? 1 : s.shape[s.shape.length - 1]
  const perRow = rowBytes(s, cols)
  if (e.kind === 'int8-groups') {
    const scalesBytes = (s.byteLength / e.groupSize) * F32_BYTES
    if (!Number.isInteger(scalesBytes) || !inside(e.scalesOffset, scalesBytes)) throw new ModelFormatError(file.path, `the scales of tensor ${s.name} lie outside the file`)
    const values = new Recallable(() => new Int8Array(readFileRange(file, s.offset, s.byteLength).buffer))
    const scales = new Recallable(() => new Float32Array(readFileRange(file, e.scalesOffset, scalesBytes).buffer))
    const groupSize = e.groupSize
    const data: TensorData = {
      kind: 'int8-groups',
      groupSize,
      get values() {
        return values.get()
      },
      get scales() {
        return scales.get()
      }
    }
    const rows = (start: number, count: number): Tensor => {
      const v = new Int8Array(readFileRange(file, s.offset + start * cols, count * cols).buffer)
      const sc = new Float32Array(readFileRange(file, e.scalesOffset + ((start * cols) / groupSize) * F32_BYTES, ((count * cols) / groupSize) * F32_BYTES).buffer)
      return { name: s.name, shape: [count, cols], data: { kind: 'int8-groups', groupSize, values: v, scales: sc } }
    }
    return perRow === null ? { name: s.name, shape: s.shape, data } : { name: s.name, shape: s.shape, data, rows }
  }
  const bytes = new Recallable(() => readFileRange(file, s.offset, s.byteLength))
  const data: TensorData =
    e.kind === 'dense'
      ? {
          kind: 'dense',
          dtype: e.dtype,
          get bytes() {
            return bytes.get()
          }
        }
      : {
          kind: 'ggml',
          dtype: e.dtype,
          get bytes() {
            return bytes.get()
          }
        }
  if (perRow === null) return { name: s.name, shape: s.shape, data }
  const rows = (start: number, count: number): Tensor => {
    const part = readFileRange(file, s.offset + start * perRow, count * perRow)
    const partData: TensorData = e.kind === 'dense' ? { kind: 'dense', dtype: e.dtype, bytes: part } : { kind: 'ggml', dtype: e.dtype, bytes: part }
    return { name: s.name, shape: [count, cols], data: partData }
  }
  return { name: s.name, shape: s.shape, data, rows }
}

/**
 * The weights a layout describes, each tensor read from its file when used (see the file comment). Every
 * range is checked against its file's size now, so a layout that does not fit its files fails at open.
 */
export function readWeights(layout: WeightLayout): ModelWeights {
  return weightsOfLayout(layout, (s) => {
    const file: WeightFile | undefined = layout.files.at(s.file)
    if (file === undefined || s.file < 0) throw new ModelFormatError(`file ${s.file}`, `tensor ${s.name} names file ${s.file}, which the layout does not list`)
    return fileTensor(s, file)
  })
}
