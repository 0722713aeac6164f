/**
 * @file A process killed with SIGKILL while saving a KV snapshot: the database passes its integrity check, every
 * block it acknowledged is there and reads back verified, and no partial block is ever returned (a block is one row,
 * committed whole or not at all).
 */
import { fork } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { kvRootKey, openStore } from '../../main/store'
import { matchAndRead } from '../helpers/kv-match'
import { repoRoot, tempDir } from '../helpers/paths'
import { KV_CRASH } from './kv-crash-content'

const scratch = tempDir('tandem-kv-crash-')
afterAll(() => scratch.dispose())

/** Runs the writer and SIGKILLs it after `count` acknowledged blocks (while it writes the next); resolves with the last ack. */
function runAndKill(file: string, count: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = fork(join(repoRoot, 'test/store/kv-crash-writer.ts'), [file], { cwd: repoRoot, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'pipe', 'ipc'] })
    let last = -1
    let killed = false
    let stderr = ''
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('message', (msg) => {
      if (typeof msg !== 'number') return
      last = msg
      if (msg + 1 >= count && !killed) killed = child.kill('SIGKILL')
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      if (killed && signal === 'SIGKILL') resolve(last)
      else reject(new Error(`writer exited early (code ${code}, signal ${signal}): ${stderr}`))
    })
  })
}

describe('a KV snapshot save killed mid-write', () => {
  it('leaves an intact database whose stored blocks all verify', async () => {
    const file = join(scratch.dir, 'kv.db')
    const acked = await runAndKill(file, 12)
    const store = openStore(file)
    try {
      expect(store.db.pragma('integrity_check', { simple: true })).toBe('ok')
      const tokens = Array.from({ length: 200 }, (_, b) => KV_CRASH.tokens(b)).flat()
      const m = matchAndRead(store, kvRootKey(KV_CRASH.fingerprint), tokens, KV_CRASH.bytesPerToken)
      expect(m.problems).toEqual([])
      // at least every acknowledged block; possibly the one in flight when it committed just before the kill
      expect(m.blocks.length).toBeGreaterThanOrEqual(acked + 1)
      m.blocks.forEach((b, i) => expect(Buffer.from(b.data).equals(Buffer.from(KV_CRASH.data(i)))).toBe(true))
      expect(store.kvBlocks.usage().blocks).toBe(m.blocks.length)
    } finally {
      store.close()
    }
  }, 60_000)
})
