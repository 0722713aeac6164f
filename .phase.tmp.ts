import { loadModel, readWeights } from './main/engine/model'
import { graphCacheKey, modelFingerprint } from './main/engine/graph'
import { openCachedGraph } from './main/engine/runtime/session/open-cached-graph'
const path = process.argv[2]
const t = (label: string, t0: number) => console.log(label, (performance.now() - t0).toFixed(0), 'ms')
let t0 = performance.now()
const m = await loadModel(path, { weights: false })
t(`header (${m.tokenizer.vocabSize} tokens)`, t0)
console.log('after header', (await import('node:fs')).readFileSync('/proc/self/status', 'utf8').match(/VmRSS.*/g))
t0 = performance.now(); const w = readWeights(m.layout); t('readWeights', t0)
t0 = performance.now(); modelFingerprint({ config: m.config, weights: w }); t('fingerprint', t0)
t0 = performance.now()
const { info } = await openCachedGraph({ config: m.config, weights: w }, { cacheDir: process.argv[3], graph: { ropeTableLength: 2048 } })
t(`openCachedGraph ${JSON.stringify(info)}`, t0)
const s = (await import('node:fs')).readFileSync('/proc/self/status', 'utf8').match(/VmHWM.*|VmRSS.*/g)
console.log(s)
console.log((await import('node:fs')).readFileSync('/proc/self/smaps_rollup', 'utf8').split('\n').filter((l) => /^(Rss|Anonymous|Shared_Clean|Private_Clean|Private_Dirty|Shared_Dirty)/.test(l)).join(' | '))
