/**
 * @file Crash safety on a real file: a child process streams messages into the store, acknowledging each
 * committed write; the parent SIGKILLs it mid-stream, then reopens the file and checks that it is intact and
 * that every acknowledged write is there with its full content.
 */
import { fork } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openStore } from '../../main/store'
import { repoRoot, tempDir } from '../helpers/paths'
import { crashContent, type CrashAck } from './crash-content'

let scratch: ReturnType<typeof tempDir>
beforeEach(() => {
  scratch = tempDir('tandem-crash-')
})
afterEach(() => scratch.dispose())

/** Acknowledgements to wait for before the kill: enough for ~20 exchanges, several MB written. */
const ACKS_BEFORE_KILL = 150

/** Validates an IPC message from the writer (it crosses a process boundary). */
function toAck(msg: unknown): CrashAck {
  if (typeof msg !== 'object' || msg === null || !('id' in msg && 'i' in msg && 'tag' in msg && 'length' in msg && 'done' in msg)) {
    throw new Error(`bad ack ${JSON.stringify(msg)}`)
  }
  const { id, i, tag, length, done } = msg
  if (
    typeof id !== 'string' ||
    typeof i !== 'number' ||
    (tag !== 'u' && tag !== 'a') ||
    typeof length !== 'number' ||
    typeof done !== 'boolean'
  ) {
    throw new Error(`bad ack ${JSON.stringify(msg)}`)
  }
  return { id, i, tag, length, done }
}

/** Starts the writer under tsx, collects acks, SIGKILLs it after `count` acks; resolves with the last ack per message. */
function runAndKill(file: string, conversationId: string, count: number): Promise<Map<string, CrashAck>> {
  return new Promise((resolve, reject) => {
    const child = fork(join(repoRoot, 'test/store/crash-writer.ts'), [file, conversationId], {
      cwd: repoRoot,
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'pipe', 'ipc']
    })
    const latest = new Map<string, CrashAck>()
    let received = 0
    let killed = false
    let stderr = ''
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('message', (msg) => {
      let a: CrashAck
      try {
        a = toAck(msg)
      } catch (err) {
        child.kill('SIGKILL')
        reject(err)
        return
      }
      latest.set(a.id, a)
      received += 1
      if (received === count) {
        killed = child.kill('SIGKILL')
      }
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      if (killed && signal === 'SIGKILL') resolve(latest)
      else reject(new Error(`writer exited early (code ${code}, signal ${signal}): ${stderr}`))
    })
  })
}

describe('crash safety', () => {
  it('keeps every acknowledged write after the writer is SIGKILLed mid-stream, and the file stays intact', async () => {
    const file = join(scratch.dir, 'tandem.db')
    const setup = openStore(file)
    const conversationId = setup.conversations.create({ title: 'crash test' }).id
    setup.close()

    const acked = await runAndKill(file, conversationId, ACKS_BEFORE_KILL)
    expect(acked.size).toBeGreaterThan(10)

    const store = openStore(file)
    try {
      expect(store.db.pragma('integrity_check', { simple: true })).toBe('ok')
      expect(store.db.pragma('foreign_key_check')).toEqual([])

      const messages = store.messages.list(conversationId)
      const byId = new Map(messages.map((m) => [m.id, m]))
      for (const a of acked.values()) {
        const m = byId.get(a.id)
        expect(m, `acknowledged message ${a.tag}${a.i}`).toBeDefined()
        if (m === undefined) continue
        const full = crashContent(a.i, a.tag)
        if (a.done) {
          expect(m.content === full, `${a.tag}${a.i} complete content`).toBe(true)
          expect(m.status).toBe('complete')
        } else {
          // A later chunk may have committed after the last ack arrived: at least the acked prefix, never garbage.
          expect(m.content.length).toBeGreaterThanOrEqual(a.length)
          expect(full.startsWith(m.content), `${a.tag}${a.i} is a prefix of its reply`).toBe(true)
        }
      }
      // Writes are whole: seq runs 0..n-1 and every message, acked or not, is a valid prefix of its content.
      expect(messages.map((m) => m.seq)).toEqual(messages.map((_, k) => k))
      messages.forEach((m, k) => {
        const full = crashContent(Math.floor(k / 2), k % 2 === 0 ? 'u' : 'a')
        expect(full.startsWith(m.content), `message ${k}`).toBe(true)
      })

      // Startup recovery: the reply cut off by the kill becomes 'stopped' and the indexes stay consistent.
      expect(store.messages.markInterrupted()).toBeLessThanOrEqual(1)
      store.db.exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)")
      expect(store.conversations.search('lorem').length).toBeGreaterThan(0)
    } finally {
      store.close()
    }
  })
})
