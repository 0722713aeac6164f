// side-by-side, alternating: Tandem ModelEngine (in-process) vs llama.cpp (node-llama-cpp), same GGUF, same threads.
import { getLlama } from '/work/main/bench/peers/node_modules/node-llama-cpp/dist/index.js'
import { createSession } from '/work/main/main/engine/devices/index.ts'
import { compileModel } from '/work/main/main/engine/graph/index.ts'
import { loadModel } from '/work/main/main/engine/model/index.ts'
import { ModelEngine } from '/work/main/main/engine/runtime/model-engine.ts'
const path = process.argv[2]
const threads = Number(process.argv[3] ?? 2)
const rounds = Number(process.argv[4] ?? 3)
const what = (process.argv[5] ?? 'p128,p512,d16,d1024').split(',')
const chunk = Number(process.argv[6] ?? 512)
const prompt = (n: number) => Array.from({ length: n }, (_, i) => 3 + ((i * 7919) % 31000))
const llama = await getLlama({ gpu: false, build: 'never' })
const lm = await llama.loadModel({ modelPath: path })
const lctx = await lm.createContext({ contextSize: 1200, threads, batchSize: 512 })
const seq = lctx.getSequence()
const m = await loadModel(path)
const model = { config: m.config, weights: m.weights! }
const session = await createSession(compileModel(model, { ropeTableLength: 1200 }), { device: 'cpu', intraOpThreads: threads, interOpThreads: 1 })
const engine = new ModelEngine(model, session, { contextLength: 1200, prefillChunk: chunk })
const res: Record<string, number[]> = {}
const push = (k: string, v: number) => (res[k] ??= []).push(v)
const med = (x: number[]) => [...x].sort((a, b) => a - b)[x.length >> 1]
const DEC = 12
const cpuMs = (c0: NodeJS.CpuUsage) => { const c = process.cpuUsage(c0); return (c.user + c.system) / 1000 }
for (let r = 0; r < rounds; r++) {
  for (const w of what) {
    const n = Number(w.slice(1))
    if (w[0] === 'p') {
      let t0 = performance.now(); let c0 = process.cpuUsage(); await engine.forward(prompt(n), 0); push(`tandem ${w}`, n * 1000 / (performance.now() - t0)); push(`tandemcpu ${w}`, n * 1000 / cpuMs(c0))
      await seq.eraseContextTokenRanges([{ start: 0, end: seq.nextTokenIndex }])
      t0 = performance.now(); c0 = process.cpuUsage(); await seq.evaluateWithoutGeneratingNewTokens(prompt(n)); push(`llama  ${w}`, n * 1000 / (performance.now() - t0)); push(`llamacpu ${w}`, n * 1000 / cpuMs(c0))
    } else {
      await engine.forward(prompt(n), 0)
      const ts: number[] = []
      let c0 = process.cpuUsage()
      for (let s = 0; s < DEC; s++) { const t0 = performance.now(); await engine.forward([5 + s], n + s); ts.push(performance.now() - t0) }
      push(`tandem ${w}`, 1000 / med(ts)); push(`tandemcpu ${w}`, DEC * 1000 / cpuMs(c0))
      await seq.eraseContextTokenRanges([{ start: 0, end: seq.nextTokenIndex }])
      await seq.evaluateWithoutGeneratingNewTokens(prompt(n))
      const gen = seq.evaluate([5], { temperature: 0, yieldEogToken: true })
      const lt: number[] = []
      let t0 = performance.now()
      for (let i = 0; i <= DEC; i++) { await gen.next(); const t = performance.now(); if (i > 0) lt.push(t - t0); else c0 = process.cpuUsage(); t0 = t }
      push(`llamacpu ${w}`, DEC * 1000 / cpuMs(c0))
      await gen.return(undefined)
      push(`llama  ${w}`, 1000 / med(lt))
    }
  }
}
for (const w of what) {
  const a = med(res[`tandem ${w}`]), b = med(res[`llama  ${w}`])
  const ac = med(res[`tandemcpu ${w}`]), bc = med(res[`llamacpu ${w}`])
  console.log(`${path.split('/').pop()!.slice(13, 18)} thr ${threads} ${w.padEnd(6)} wall: tandem ${a.toFixed(1).padStart(7)}  llama ${b.toFixed(1).padStart(7)}  ratio ${(a / b).toFixed(2)} | per-cpu-second: tandem ${ac.toFixed(1)} llama ${bc.toFixed(1)} ratio ${(ac / bc).toFixed(2)}  [t ${res[`tandem ${w}`].map((x) => x.toFixed(0)).join(',')} | l ${res[`llama  ${w}`].map((x) => x.toFixed(0)).join(',')}]`)
}
await engine.dispose(); await lctx.dispose(); await lm.dispose(); await llama.dispose()
