import { getLlama } from '/work/main/bench/peers/node_modules/node-llama-cpp/dist/index.js'
const path = process.argv[2]
const threads = Number(process.argv[3] ?? 2)
const llama = await getLlama({ gpu: false, build: 'never' })
const model = await llama.loadModel({ modelPath: path })
const context = await model.createContext({ contextSize: 1200, threads, batchSize: 512 })
const seq = context.getSequence()
const prompt = (n: number) => Array.from({ length: n }, (_, i) => 3 + ((i * 7919) % 31000))
for (let r = 0; r < 2; r++) {
  for (const n of [128, 512]) {
    await seq.eraseContextTokenRanges([{ start: 0, end: seq.nextTokenIndex }])
    const t0 = performance.now(); await seq.evaluateWithoutGeneratingNewTokens(prompt(n)); const dt = performance.now() - t0
    console.log(`llama.cpp thr ${threads} prefill ${n}: ${(n * 1000 / dt).toFixed(1)} tok/s`)
  }
  for (const ctx of [16, 1024]) {
    await seq.eraseContextTokenRanges([{ start: 0, end: seq.nextTokenIndex }])
    await seq.evaluateWithoutGeneratingNewTokens(prompt(ctx))
    const gen = seq.evaluate([5], { temperature: 0, yieldEogToken: true })
    const ts: number[] = []
    let t0 = performance.now()
    for (let i = 0; i < 17; i++) { await gen.next(); const t = performance.now(); if (i > 0) ts.push(t - t0); t0 = t }
    await gen.return(undefined)
    ts.sort((a, b) => a - b)
    console.log(`llama.cpp thr ${threads} decode @${ctx}: ${(1000 / ts[ts.length >> 1]).toFixed(1)} tok/s`)
  }
}
await context.dispose(); await model.dispose(); await llama.dispose()
