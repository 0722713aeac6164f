/**
 * @file y = x · Wᵀ (+ b) for one model weight W [N, K]: quantized weights stay quantized as
 * `com.microsoft.MatMulNBits`; dense ones (and int8 groups that do not fit MatMulNBits blocks) become a
 * float32 MatMul initializer [K, N].
 */
import { tensorToFloat32, type Tensor } from '../model'
import type { EmitContext } from './emit-context'
import { MS_DOMAIN } from './onnx-builder'
import { packNBits } from './quant-pack'

/** Transposes W [n, k] (row-major) into [k, n]. */
function transpose(w: Float32Array, n: number, k: number): Float32Array {
  const out = new Float32Array(n * k)
  for (let r = 0; r < n; r++) {
    const row = r * k
    for (let c = 0; c < k; c++) out[c * n + r] = w[row + c]
  }
  return out
}

/**
 * Emits x [S, K] · Wᵀ -> [S, N] (+ bias [N]); `label` names the nodes and initializers (e.g.
 * "layer3.wq"). A tied lm head needs no sharing: the embedding itself is looked up in JS, not in-graph.
 */
export function emitLinear(ctx: EmitContext, x: string, w: Tensor, bias: Tensor | null, label: string): string {
  if (w.shape.length !== 2) throw new Error(`${w.name}: expected a 2-D weight, got [${w.shape.join(', ')}]`)
  const [n, k] = w.shape
  const b = ctx.b
  let y: string
  const packed = packNBits(w)
  if (packed) {
    const nb = k / packed.blockSize
    const codes = b.initializer(`${label}.codes`, 'uint8', [n, nb, (packed.blockSize * packed.bits) / 8], packed.codes)
    const scales = b.f32(`${label}.scales`, [n * nb], packed.scales)
    const inputs = [x, codes, scales]
    if (packed.zeroPoints) inputs.push(b.initializer(`${label}.zero_points`, 'uint8', [packed.zeroPoints.length], packed.zeroPoints))
    y = b.op('MatMulNBits', inputs, {
      name: `${label}/matmul_nbits`,
      domain: MS_DOMAIN,
      attrs: {
        K: { int: k },
        N: { int: n },
        bits: { int: packed.bits },
        block_size: { int: packed.blockSize },
        // 0 = float32 activations and accumulation: the exact path (int8 activations are a speed option)
        accuracy_level: { int: 0 }
      }
    })
    if (packed.minsT) {
      // Q4_K: subtract Σ_blocks (dmin·m)_{n,b} · Σ_{k in b} x_k, i.e. blockSums(x) [S, nb] · minsT [nb, N]
      const mins = b.f32(`${label}.mins`, [nb, n], packed.minsT)
      const minTerm = b.op('MatMul', [ctx.blockSums(x, k, packed.blockSize), mins], { name: `${label}/mins` })
      y = b.op('Sub', [y, minTerm], { name: `${label}/minus_mins` })
    }
  } else {
    const wt = b.f32(`${label}.weight_t`, [k, n], transpose(tensorToFloat32(w), n, k))
    y = b.op('MatMul', [x, wt], { name: `${label}/matmul` })
  }
  if (bias) {
    if (bias.shape.length !== 1 || bias.shape[0] !== n) throw new Error(`${bias.name}: bias shape [${bias.shape.join(', ')}] does not match ${n} outputs`)
    y = b.op('Add', [y, b.f32(`${label}.bias`, [n], tensorToFloat32(bias))], { name: `${label}/bias` })
  }
  return y
}
