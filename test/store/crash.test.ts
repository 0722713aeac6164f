/**
 * @file Crash safety on a real file, with replies saved the way the chat service saves them (the growing text
 * rewritten whole with setContent, then finished with update): a child process streams messages into the
 * store, acknowledging each committed write; the parent SIGKILLs it, then checks the file is intact, every
 * acknowledged write is there, and the app's startup (createApp, which runs markInterrupted) recovers a
 * reply cut off mid-stream as 'stopped' with the text saved so far.
 */
import { fork } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createApp } from '../../main/services'
import { openStore, type Message } from '../../main/store'
import { repoRoot, tempDir } from '../helpers/paths'
import { chunkEnds, crashContent, CRASH_CHUNKS, type CrashAck } from './crash-content'

let scratch: ReturnType<typeof tempDir>
let dataDir: string
let file: string
let conversationId: string
beforeEach(() => {
  scratch = tempDir('tandem-crash-')
  // the file where the app keeps it, so the app's own startup can reopen it
  dataDir = join(scratch.dir, 'data')
  mkdirSync(dataDir)
  file = join(dataDir, 'tandem.db')
  const setup = openStore(file)
  conversationId = setup.conversations.create({ title: 'crash test' }).id
  setup.close()
})
afterEach(() => scratch.dispose())

/** Acknowledgements to wait for before the kill: enough for ~20 exchanges, several MB written. */
const ACKS_BEFORE_KILL = 150

/** Acknowledgements per exchange: the question, the empty reply, each rewrite, the finished reply. */
const ACKS_PER_EXCHANGE = CRASH_CHUNKS + 3

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

/**
 * Starts the writer under tsx, collects acks, SIGKILLs it after `count` acks; resolves with the last ack per
 * message. With `hold`, the writer stops after that ack and waits, so the kill lands at a known point.
 */
function runAndKill(count: number, hold: boolean): Promise<Map<string, CrashAck>> {
  return new Promise((resolve, reject) => {
    const child = fork(join(repoRoot, 'test/store/crash-writer.ts'), [file, conversationId, ...(hold ? [String(count)] : [])], {
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

/** Runs the app's startup on the data folder (markInterrupted among it) and returns the messages it then lists. */
async function afterStartup(): Promise<Message[]> {
  const app = createApp({ dataDir, modelDirs: [], env: {}, homeDir: join(scratch.dir, 'home'), appVersion: '9.9.9-test' })
  try {
    expect(app.store.conversations.search('lorem').length).toBeGreaterThan(0)
    return app.store.messages.list(conversationId)
  } finally {
    await app.dispose()
  }
}

describe('crash safety', () => {
  it('keeps every acknowledged write after the writer is SIGKILLed mid-stream, and the file stays intact', async () => {
    const acked = await runAndKill(ACKS_BEFORE_KILL, false)
    expect(acked.size).toBeGreaterThan(10)

    const store = openStore(file)
    let streaming: Message[]
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
          // A later rewrite may have committed after the last ack arrived: at least the acked prefix, never garbage.
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
      // The writer saves one reply at a time, so at most the last one was cut off.
      streaming = messages.filter((m) => m.status === 'streaming')
      expect(streaming.map((m) => m.seq)).toEqual(streaming.length === 0 ? [] : [messages.length - 1])
    } finally {
      store.close()
    }

    // Startup recovery: nothing is left streaming, and a cut-off reply keeps the text it had.
    const recovered = await afterStartup()
    expect(recovered.filter((m) => m.status === 'streaming')).toEqual([])
    for (const m of streaming) expect(recovered.find((r) => r.id === m.id)).toMatchObject({ status: 'stopped', content: m.content })
  })

  it('a reply killed between two rewrites comes back after startup as stopped, holding exactly the last saved prefix', async () => {
    // Kill after the 3rd rewrite of the 3rd exchange's reply: the writer holds there, so the file's state is known.
    const exchange = 2
    const rewrites = 3
    const acked = await runAndKill(exchange * ACKS_PER_EXCHANGE + 2 + rewrites, true)
    const reply = [...acked.values()].find((a) => a.i === exchange && a.tag === 'a')
    const answer = crashContent(exchange, 'a')
    const saved = answer.slice(0, chunkEnds(answer)[rewrites - 1])
    expect(reply).toMatchObject({ done: false, length: saved.length })

    const recovered = await afterStartup()
    expect(recovered).toHaveLength(2 * exchange + 2)
    const cut = recovered[recovered.length - 1]
    expect(cut.id).toBe(reply?.id)
    expect(cut.status).toBe('stopped')
    expect(cut.content === saved).toBe(true)
    expect(recovered.slice(0, -1).every((m) => m.status === 'complete')).toBe(true)
  })
})
