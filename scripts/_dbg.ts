import { createSession } from '../main/engine/devices'
import { compileModel, int8ActivationPlan } from '../main/engine/graph'
import { createReferenceState, referenceForward } from '../main/engine/model/reference'
import { ModelEngine } from '../main/engine/runtime/model-engine'
import { randomModel } from '../test/graph/random-model'
const spec = JSON.parse(process.argv[2] ?? '{}')
const model = randomModel({ seed: 1, nLayers: 1, ...spec })
const prompt = [3, 17, 42, 5, 88, 1, 60, 23]
const ctxLen = 16
for (const n of [1, 2]) {
  const session = await createSession(compileModel(model, { ropeTableLength: ctxLen }), { device: 'cpu', intraOpThreads: 1 })
  const engine = new ModelEngine(model, session, { contextLength: ctxLen })
  const got = await engine.forward(prompt.slice(0, n), 0)
  const state = createReferenceState(model.config, ctxLen, { int8Activations: (t) => int8ActivationPlan(t, { ropeTableLength: ctxLen }) })
  let want = new Float32Array(0)
  for (let p = 0; p < n; p++) want = referenceForward(model, state, prompt[p], p).slice()
  let d = 0; for (let i = 0; i < want.length; i++) d = Math.max(d, Math.abs(got[i] - want[i]))
  // decode one more
  const got2 = await engine.forward([7], n)
  const want2 = referenceForward(model, state, 7, n)
  let d2 = 0; for (let i = 0; i < want2.length; i++) d2 = Math.max(d2, Math.abs(got2[i] - want2[i]))
  console.log(`prefill ${n}: max diff ${d.toExponential(2)}; then decode: ${d2.toExponential(2)}  (scale ${Math.max(...want.map(Math.abs)).toFixed(2)})`)
  await engine.dispose()
}
