/**
 * @file Child process for the KV crash test: saves KV snapshot blocks (1 MiB each, chained) to the store at argv[2]
 * until killed, acknowledging each committed block over IPC with its index. Run with `node --import tsx`.
 */
import { kvRootKey, openStore } from '../../main/store'
import { KV_CRASH } from './kv-crash-content'

const [file] = process.argv.slice(2)
const send = process.send?.bind(process)
if (file === undefined || send === undefined) throw new Error('usage: fork(kv-crash-writer.ts, [dbFile]) with an IPC channel')

const store = openStore(file)
let parent = kvRootKey(KV_CRASH.fingerprint)
for (let i = 0; ; i++) {
  parent = store.kvBlocks.put(parent, i * KV_CRASH.blockTokens, KV_CRASH.tokens(i), KV_CRASH.data(i))
  send(i)
  await new Promise((resolve) => setImmediate(resolve))
}
