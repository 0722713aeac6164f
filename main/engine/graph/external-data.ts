/**
 * @file ONNX external data: a graph's large initializers written to a file of their own beside the graph,
 * one tensor at a time as the compiler emits them. A protobuf message cannot exceed 2 GiB, so without this
 * no 3B-at-Q8 or 7B model compiles; and nothing here holds more than the tensor being written. Each large
 * tensor starts on a 64 KiB boundary (Windows' allocation granularity, a multiple of every page size), which
 * is what lets ONNX Runtime memory-map it instead of reading it into a buffer of its own.
 */
import { closeSync, openSync, writeSync } from 'node:fs'

/** Initializers smaller than this stay inside the graph (constants, norms of small models, shape tensors). */
export const EXTERNAL_MIN_BYTES = 4096
/** Largest single write() (Node refuses lengths of 2 GiB and more; one tensor can be that large). */
const WRITE_CHUNK_BYTES = 256 << 20
/** Alignment of every external tensor's offset. */
export const EXTERNAL_ALIGNMENT = 64 * 1024

/** Where one tensor's bytes went. */
export interface ExternalSpan {
  /** the file name as the graph refers to it (relative to the graph's folder) */
  readonly location: string
  readonly offset: number
  readonly length: number
}

/** Appends tensors to one external-data file; `close()` when the graph is built. */
export class ExternalWeights {
  private fd: number | null = null
  private closed = false
  private end = 0
  private readonly padding = new Uint8Array(EXTERNAL_ALIGNMENT)

  /**
   * @param path where the bytes are written now (a temporary name, renamed when the graph is complete)
   * @param location the name the graph records, which the file has once renamed beside the graph
   */
  constructor(
    readonly path: string,
    readonly location: string
  ) {}

  /** Bytes written so far (0 when no tensor was large enough to leave the graph). */
  get sizeBytes(): number {
    return this.end
  }

  /** Writes `bytes` at the next aligned offset. */
  append(bytes: Uint8Array): ExternalSpan {
    if (this.closed) throw new Error('external weights file is closed')
    this.fd ??= openSync(this.path, 'w')
    const offset = Math.ceil(this.end / EXTERNAL_ALIGNMENT) * EXTERNAL_ALIGNMENT
    this.writeAll(this.padding.subarray(0, offset - this.end))
    this.writeAll(bytes)
    this.end = offset + bytes.byteLength
    return { location: this.location, offset, length: bytes.byteLength }
  }

  /** Closes the file (safe to call twice). */
  close(): void {
    this.closed = true
    if (this.fd === null) return
    closeSync(this.fd)
    this.fd = null
  }

  private writeAll(bytes: Uint8Array): void {
    if (this.fd === null) throw new Error('external weights file is closed')
    let at = 0
    while (at < bytes.byteLength) at += writeSync(this.fd, bytes, at, Math.min(WRITE_CHUNK_BYTES, bytes.byteLength - at))
  }
}
