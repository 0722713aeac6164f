/**
 * @file Child process for the crash test: writes exchanges (a user message, then a streamed assistant reply)
 * to the store at argv[2] in conversation argv[3] until killed, acknowledging each committed write over IPC.
 * Run with `node --import tsx`.
 */
import { setImmediate as tick } from 'node:timers/promises'
import { openStore } from '../../main/store'
import { chunkEnds, crashContent, type CrashAck } from './crash-content'

const [file, conversationId] = process.argv.slice(2)
const send = process.send?.bind(process)
if (file === undefined || conversationId === undefined || send === undefined) {
  throw new Error('usage: fork(crash-writer.ts, [dbFile, conversationId]) with an IPC channel')
}

const store = openStore(file)
/** Reports a committed write, then yields like a service awaiting its next token (this also flushes IPC). */
const ack = async (a: CrashAck): Promise<void> => {
  send(a)
  await tick()
}

for (let i = 0; ; i++) {
  const question = crashContent(i, 'u')
  const q = store.messages.append({ conversationId, role: 'user', content: question })
  await ack({ id: q.id, i, tag: 'u', length: question.length, done: true })

  const answer = crashContent(i, 'a')
  const reply = store.messages.append({ conversationId, role: 'assistant', status: 'streaming' })
  await ack({ id: reply.id, i, tag: 'a', length: 0, done: false })
  let start = 0
  for (const end of chunkEnds(answer)) {
    store.messages.appendContent(reply.id, answer.slice(start, end))
    await ack({ id: reply.id, i, tag: 'a', length: end, done: false })
    start = end
  }
  store.messages.update(reply.id, { status: 'complete' })
  await ack({ id: reply.id, i, tag: 'a', length: answer.length, done: true })
}
