/**
 * @file The oracle as a ForwardModel: lets generation tests run the real loop on the plain TypeScript
 * forward pass, and lets compiled-graph tests compare against it position by position.
 */
import { createReferenceState, referenceForward, type ReferenceState } from '../../main/engine/model/reference'
import type { LoadedModel, ModelWeights } from '../../main/engine/model/types'
import type { ForwardModel } from '../../main/engine/runtime/generation/generation-loop'

export class ReferenceRunner implements ForwardModel {
  readonly contextLength: number
  private readonly state: ReferenceState
  private readonly model: { config: LoadedModel['config']; weights: ModelWeights }
  /** positions computed so far */
  length = 0
  calls = 0

  constructor(model: LoadedModel, contextLength = model.config.contextLength) {
    if (!model.weights) throw new Error('ReferenceRunner needs a model loaded with weights')
    this.model = { config: model.config, weights: model.weights }
    this.contextLength = contextLength
    this.state = createReferenceState(model.config, contextLength)
  }

  async forward(tokens: readonly number[], pos: number): Promise<Float32Array> {
    if (pos !== this.length) throw new Error(`forward at ${pos} but the cache holds ${this.length}`)
    if (pos + tokens.length > this.contextLength) throw new Error('context overflow')
    this.calls++
    const logits = new Float32Array(this.model.config.vocabSize)
    for (let i = 0; i < tokens.length; i++) logits.set(referenceForward(this.model, this.state, tokens[i], pos + i))
    this.length = pos + tokens.length
    return logits
  }

  async truncate(pos: number): Promise<void> {
    this.length = Math.min(this.length, pos)
  }
}
