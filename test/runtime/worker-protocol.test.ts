import { once } from 'node:events'
import { describe, expect, it } from 'vitest'
import { parseWorkerResponse, type WorkerResponse } from '../../main/engine/runtime/model-worker/protocol'
import { startModelWorkerThread } from '../../main/engine/runtime/model-worker/model-worker-client'
import { sharedModel, tempDir } from '../helpers/paths'
import { loadModel } from '../../main/engine/model'

describe('model worker message validation (live worker)', () => {
  it('answers malformed requests with a ProtocolError and keeps serving valid ones', async () => {
    const tmp = tempDir()
    const { config, layout } = await loadModel(sharedModel('stories260K/stories260K.bin'), { weights: false })
    const worker = startModelWorkerThread({ config, layout, cacheDir: tmp.dir, threads: 1, maxContext: 8, cancel: new SharedArrayBuffer(4) })
    const inbox: WorkerResponse[] = []
    // the open's announcements (progress before 'ready', the cache verification after) are checked apart from the replies
    const announced: string[] = []
    let wake: (() => void) | null = null
    worker.on('message', (m: unknown) => {
      const msg = parseWorkerResponse(m, config)
      if (msg.type === 'progress' || msg.type === 'verification' || msg.type === 'ready') announced.push(msg.type === 'progress' ? msg.progress.stage : msg.type)
      if (msg.type === 'progress' || msg.type === 'verification') return
      inbox.push(msg)
      wake?.()
    })
    const next = async (): Promise<WorkerResponse> => {
      while (inbox.length === 0) await new Promise<void>((r) => (wake = r))
      const m = inbox.shift()
      if (!m) throw new Error('unreachable')
      return m
    }
    try {
      expect((await next()).type).toBe('ready')
      for (const junk of [42, null, { type: 'forward', id: 3, tokens: 'abc', pos: 0 }, { type: 'nuke', id: 4 }, { type: 'truncate', id: 5, pos: -2 }]) {
        worker.postMessage(junk)
        const reply = await next()
        if (reply.type !== 'error') throw new Error(`expected an error reply, got ${reply.type}`)
        expect(reply.error.name).toBe('ProtocolError')
        expect(reply.id).toBe(typeof junk === 'object' && junk !== null ? junk.id : null)
      }
      worker.postMessage({ type: 'forward', id: 6, tokens: [1], pos: 0 })
      const logits = await next()
      expect(logits.type === 'logits' && logits.id === 6 && logits.logits.length === 512).toBe(true)
      // a fresh cache: compiled, hashed, prepared, then ready, then the (trivial) verification
      expect([...new Set(announced)]).toEqual(['compiling', 'reading', 'preparing', 'ready', 'verification'])
      worker.postMessage({ type: 'dispose', id: 7 })
      expect(await next()).toEqual({ type: 'done', id: 7 })
      const [code] = await once(worker, 'exit')
      expect(code).toBe(0)
    } finally {
      await worker.terminate()
      tmp.dispose()
    }
  })
})
