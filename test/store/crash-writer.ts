/**
 * @file Child process for the crash tests: writes exchanges (a user message, then a streamed assistant reply)
 * to the store at argv[2] in conversation argv[3] until killed, acknowledging each committed write over IPC.
 * A reply is saved the way ChatService saves one: the whole text so far rewritten with setContent as it
 * grows, then finished with update() (final text and status). With argv[4] = N, the writer stops writing
 * after its N-th acknowledgement and waits to be killed, so the parent knows exactly what the file holds.
 * Run with `node --import tsx`.
 */
import { setImmediate as tick } from 'node:timers/promises'
import { openStore } from '../../main/store'
import { chunkEnds, crashContent, type CrashAck } from './crash-content'

const [file, conversationId, holdArg] = process.argv.slice(2)
const send = process.send?.bind(process)
if (file === undefined || conversationId === undefined || send === undefined) {
  throw new Error('usage: fork(crash-writer.ts, [dbFile, conversationId, holdAfterAcks?]) with an IPC channel')
}
const holdAfterAcks = holdArg === undefined ? Infinity : Number(holdArg)

const store = openStore(file)
let acks = 0
/** Reports a committed write, then yields like a service awaiting its next token (this also flushes IPC). */
const ack = async (a: CrashAck): Promise<void> => {
  send(a)
  await tick()
  if (++acks >= holdAfterAcks) {
    // Hold mid-stream until the parent's SIGKILL; the interval only keeps the process alive.
    setInterval(() => undefined, 60_000)
    await new Promise<never>(() => undefined)
  }
}

for (let i = 0; ; i++) {
  const question = crashContent(i, 'u')
  const q = store.messages.append({ conversationId, role: 'user', content: question })
  await ack({ id: q.id, i, tag: 'u', length: question.length, done: true })

  const answer = crashContent(i, 'a')
  const reply = store.messages.append({ conversationId, role: 'assistant', status: 'streaming' })
  await ack({ id: reply.id, i, tag: 'a', length: 0, done: false })
  for (const end of chunkEnds(answer)) {
    store.messages.setContent(reply.id, answer.slice(0, end))
    await ack({ id: reply.id, i, tag: 'a', length: end, done: false })
  }
  store.messages.update(reply.id, { content: answer, status: 'complete' })
  await ack({ id: reply.id, i, tag: 'a', length: answer.length, done: true })
}
