/**
 * @file A small ONNX graph builder over onnx-proto: graph inputs/outputs, initializers and nodes with
 * readable unique names, then protobuf bytes. Opset 21 plus `com.microsoft` 1 (MatMulNBits, RotaryEmbedding,
 * SkipSimplifiedLayerNormalization).
 */
import onnxProto from 'onnx-proto'
import type { onnx as OnnxTypes } from 'onnx-proto'
import { EXTERNAL_MIN_BYTES, type ExternalWeights } from './external-data'

const onnx = onnxProto.onnx

/** ONNX IR version written into models: IR 10 is the one that introduced opset 21 (ORT 1.30 reads up to 11). */
export const ONNX_IR_VERSION = 10
/** Default-domain opset the emitters target. */
export const ONNX_OPSET = 21
/** Microsoft contrib domain (MatMulNBits, RotaryEmbedding; SimplifiedLayerNormalization lives in the default domain). */
export const MS_DOMAIN = 'com.microsoft'

/**
 * Largest serialized model we attempt: protobuf messages are limited to 2 GiB; keep 64 MiB of head room
 * for the graph structure. Only initializers kept inside the graph count: a builder with external
 * weights (external-data.ts) writes the large ones to their own file, so its graphs have no size limit.
 */
export const MAX_PROTO_BYTES = 2 * 1024 ** 3 - 64 * 1024 ** 2

/** Element types used in our graphs. */
export type ElemType = 'float32' | 'int64' | 'uint8' | 'int8' | 'bool'

const ELEM_TYPE_CODES: Readonly<Record<ElemType, number>> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  int64: onnx.TensorProto.DataType.INT64,
  uint8: onnx.TensorProto.DataType.UINT8,
  int8: onnx.TensorProto.DataType.INT8,
  bool: onnx.TensorProto.DataType.BOOL
}

/** A dimension: fixed size or a named dynamic dimension (dimParam). */
export type Dim = number | string

/** A node attribute value, tagged so ints and floats are never confused. */
export type AttrValue =
  | { readonly int: number }
  | { readonly float: number }
  | { readonly ints: readonly number[] }
  | { readonly str: string }

/** Thrown when the weights do not fit in one protobuf. */
export class GraphTooLargeError extends Error {
  override readonly name = 'GraphTooLargeError'
}

/** Options for one node. */
export interface NodeOptions {
  /** base for the node and output names (made unique) */
  readonly name?: string
  /** explicit output value names (default: one generated output); '' leaves an optional output out */
  readonly outputs?: readonly string[]
  /** number of generated outputs when `outputs` is not given */
  readonly outputCount?: number
  readonly attrs?: Readonly<Record<string, AttrValue>>
  readonly domain?: string
}

function toAttribute(name: string, v: AttrValue): OnnxTypes.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType
  if ('int' in v) return { name, type: T.INT, i: v.int }
  if ('float' in v) return { name, type: T.FLOAT, f: v.float }
  if ('ints' in v) return { name, type: T.INTS, ints: [...v.ints] }
  return { name, type: T.STRING, s: new TextEncoder().encode(v.str) }
}

function valueInfo(name: string, elem: ElemType, dims: readonly Dim[]): OnnxTypes.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: ELEM_TYPE_CODES[elem],
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) }
      }
    }
  }
}

/** Builds one ONNX graph; emitters add nodes, `toBytes()` serializes the model. */
export class GraphBuilder {
  private readonly nodes: OnnxTypes.INodeProto[] = []
  private readonly initializers: OnnxTypes.ITensorProto[] = []
  private readonly inputs: OnnxTypes.IValueInfoProto[] = []
  private readonly outputs: OnnxTypes.IValueInfoProto[] = []
  private readonly usedNames = new Set<string>()
  /** names from `reserveName` not yet produced by a node */
  private readonly reserved = new Set<string>()
  private initializerBytes = 0

  /** @param external where large initializers go (null: every initializer inside the graph, up to MAX_PROTO_BYTES) */
  constructor(
    private readonly graphName: string,
    private readonly external: ExternalWeights | null = null
  ) {}

  /** Bytes of initializer data kept inside the graph so far (external ones are not counted). */
  get weightBytes(): number {
    return this.initializerBytes
  }

  /** `base`, or `base_2`, `base_3`... whichever is not taken yet. */
  uniqueName(base: string): string {
    let name = base
    for (let i = 2; this.usedNames.has(name); i++) name = `${base}_${i}`
    this.usedNames.add(name)
    return name
  }

  /** A unique value name that one later node may list in its explicit `outputs`. */
  reserveName(base: string): string {
    const name = this.uniqueName(base)
    this.reserved.add(name)
    return name
  }

  /** Declares a graph input. The name is used verbatim (it is part of the I/O contract). */
  input(name: string, elem: ElemType, dims: readonly Dim[]): string {
    if (this.usedNames.has(name)) throw new Error(`graph value ${name} declared twice`)
    this.usedNames.add(name)
    this.inputs.push(valueInfo(name, elem, dims))
    return name
  }

  /** Declares an existing value as a graph output. */
  output(name: string, elem: ElemType, dims: readonly Dim[]): void {
    this.outputs.push(valueInfo(name, elem, dims))
  }

  /** Adds a constant tensor from raw little-endian bytes; returns its (unique) name. */
  initializer(name: string, elem: ElemType, dims: readonly number[], bytes: Uint8Array): string {
    const unique = this.uniqueName(name)
    if (this.external !== null && bytes.byteLength >= EXTERNAL_MIN_BYTES) {
      const span = this.external.append(bytes)
      this.initializers.push({
        name: unique,
        dataType: ELEM_TYPE_CODES[elem],
        dims: [...dims],
        dataLocation: onnx.TensorProto.DataLocation.EXTERNAL,
        externalData: [
          { key: 'location', value: span.location },
          { key: 'offset', value: String(span.offset) },
          { key: 'length', value: String(span.length) }
        ]
      })
      return unique
    }
    const next = this.initializerBytes + bytes.byteLength
    if (next > MAX_PROTO_BYTES) {
      throw new GraphTooLargeError(
        `the graph's weights exceed ${(MAX_PROTO_BYTES / 1024 ** 3).toFixed(2)} GiB (protobuf's 2 GiB message limit); ` +
          'a graph this large must be compiled with external weights'
      )
    }
    this.initializerBytes = next
    this.initializers.push({ name: unique, dataType: ELEM_TYPE_CODES[elem], dims: [...dims], rawData: bytes })
    return unique
  }

  /** float32 constant. */
  f32(name: string, dims: readonly number[], values: Float32Array): string {
    return this.initializer(name, 'float32', dims, new Uint8Array(values.buffer, values.byteOffset, values.byteLength))
  }

  /** int64 constant; `dims` [] makes a scalar. */
  i64(name: string, dims: readonly number[], values: readonly number[]): string {
    return this.initializer(name, 'int64', dims, new Uint8Array(BigInt64Array.from(values, (v) => BigInt(v)).buffer))
  }

  /** Adds a node; returns its output value names. */
  node(opType: string, inputs: readonly string[], options: NodeOptions = {}): string[] {
    const base = options.name ?? opType
    const nodeName = this.uniqueName(`${base}/node`)
    const outputs = options.outputs
      ? options.outputs.map((o) => {
          if (o === '') return o // an optional output left out
          if (this.reserved.delete(o)) return o
          if (this.usedNames.has(o)) throw new Error(`graph value ${o} produced twice`)
          this.usedNames.add(o)
          return o
        })
      : Array.from({ length: options.outputCount ?? 1 }, (_, i) => this.uniqueName(i === 0 ? base : `${base}:${i}`))
    const attrs = options.attrs ?? {}
    this.nodes.push({
      name: nodeName,
      opType,
      domain: options.domain ?? '',
      input: [...inputs],
      output: outputs,
      attribute: Object.entries(attrs).map(([k, v]) => toAttribute(k, v))
    })
    return outputs
  }

  /** A node with exactly one output; returns that output's name. */
  op(opType: string, inputs: readonly string[], options: NodeOptions = {}): string {
    return this.node(opType, inputs, options)[0]
  }

  /** Serializes the model (opset 21 + com.microsoft 1). */
  toBytes(producer: string): Uint8Array {
    const model = onnx.ModelProto.create({
      irVersion: ONNX_IR_VERSION,
      producerName: producer,
      opsetImport: [
        { domain: '', version: ONNX_OPSET },
        { domain: MS_DOMAIN, version: 1 }
      ],
      graph: {
        name: this.graphName,
        node: this.nodes,
        initializer: this.initializers,
        input: this.inputs,
        output: this.outputs
      }
    })
    return onnx.ModelProto.encode(model).finish()
  }
}
