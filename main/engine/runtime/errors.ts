/** @file Errors the runtime raises for caller mistakes, with names that survive crossing the worker boundary. */

/** A forward would run past the context the model was opened with. */
export class ContextOverflowError extends Error {
  override readonly name = 'ContextOverflowError'
}

/** The model worker exited or crashed; pending and later calls fail with this. */
export class WorkerExitedError extends Error {
  override readonly name = 'WorkerExitedError'
}

/** A message across the worker boundary did not match the protocol. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError'
}

/** A forward stopped between prefill chunks because its caller cancelled it (e.g. the user pressed Stop). */
export class ForwardCancelledError extends Error {
  override readonly name = 'ForwardCancelledError'
}

/**
 * The model's output held NaN or infinity: its weights are damaged (or overflow in this arithmetic), so no
 * token can be chosen from it. Sampling such logits would pick an arbitrary or out-of-range id.
 */
export class InvalidLogitsError extends Error {
  override readonly name = 'InvalidLogitsError'
}
