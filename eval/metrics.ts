/** @file What `npm run eval` measures per position: KL divergence to the float model, top-1 agreement, perplexity. */

/** log-softmax of `logits` (float64). */
export function logSoftmax(logits: Float32Array): Float64Array {
  let max = -Infinity
  for (const v of logits) max = Math.max(max, v)
  let sum = 0
  for (const v of logits) sum += Math.exp(v - max)
  const lse = max + Math.log(sum)
  return Float64Array.from(logits, (v) => v - lse)
}

/** KL(p ‖ q) from log-probabilities: Σ p·(log p − log q). */
export function klDivergence(logP: Float64Array, logQ: Float64Array): number {
  let kl = 0
  for (let i = 0; i < logP.length; i++) {
    const p = Math.exp(logP[i])
    if (p > 0) kl += p * (logP[i] - logQ[i])
  }
  return Math.max(0, kl)
}

export function argmax(x: ArrayLike<number>): number {
  let best = 0
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i
  return best
}

/** Running averages over the positions of one method against the float model's. */
export class Agreement {
  private kl = 0
  private agree = 0
  private nll = 0
  private positions = 0
  private scored = 0

  /** One position: the float model's and the method's log-probabilities, and the next token when known. */
  add(reference: Float64Array, method: Float64Array, next: number | null): void {
    this.kl += klDivergence(reference, method)
    if (argmax(reference) === argmax(method)) this.agree++
    this.positions++
    if (next !== null) {
      this.nll -= method[next]
      this.scored++
    }
  }

  get result(): { readonly kl: number; readonly top1: number; readonly perplexity: number; readonly positions: number } {
    return {
      kl: this.positions === 0 ? 0 : this.kl / this.positions,
      top1: this.positions === 0 ? 1 : this.agree / this.positions,
      perplexity: this.scored === 0 ? Number.NaN : Math.exp(this.nll / this.scored),
      positions: this.positions
    }
  }
}
