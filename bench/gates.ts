/**
 * @file The gates benchmark on its own (bench/gates-measure.ts says what it measures); `npm run bench --
 * --virtual-npu` runs it as part of the NPU-path section.
 *
 *   node --import tsx bench/gates.ts [--models f32,q8_0,q4_0,q4_k_m] [--variants "node run|C runInto (bound)"]
 *                                    [--steps 100] [--reps 9] [--threads N]
 *
 * The models are the bench's 110M files (written by `npm run bench` into bench/.models).
 */
import { parseArgs } from 'node:util'
import { defaultIntraOpThreads } from '../main/engine/devices'
import { GATE_VARIANTS, measureGates, renderGates, type GateVariant } from './gates-measure'
import { BENCH_MODEL_IDS, type BenchModelId } from './models'

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: 'f32,q8_0,q4_0,q4_k_m' },
    variants: { type: 'string', default: GATE_VARIANTS.join('|') },
    steps: { type: 'string', default: '100' },
    reps: { type: 'string', default: '9' },
    threads: { type: 'string' }
  }
})
const isModelId = (s: string): s is BenchModelId => BENCH_MODEL_IDS.some((m) => m === s)
const isVariant = (s: string): s is GateVariant => GATE_VARIANTS.some((v) => v === s)
const models = values.models.split(',').map((id) => {
  if (!isModelId(id)) throw new Error(`unknown model ${id}; models: ${BENCH_MODEL_IDS.join(', ')}`)
  return id
})
const variants = values.variants.split('|').map((v) => {
  if (!isVariant(v)) throw new Error(`unknown variant ${v}; variants: ${GATE_VARIANTS.join(' | ')}`)
  return v
})
const steps = Number(values.steps)
const reps = Number(values.reps)
const threads = values.threads === undefined ? (defaultIntraOpThreads() ?? 0) : Number(values.threads)
console.log(`${threads} threads, prompt 16, ${steps} decode steps, ${reps} reps in rotating order`)
const rows = await measureGates({ models, variants, steps, reps, threads, modelsDir: 'bench/.models', log: (l) => console.error(l) })
console.log(renderGates(rows, variants))
