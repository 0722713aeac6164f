/**
 * @file Child process for the restart tests: opens the app on an existing data folder (a new process, the same
 * SQLite file), runs one chat request, waits for the KV snapshot save, shuts down and prints the final message as
 * JSON on stdout. Run with `node --import tsx chat-child.ts DIR MODELS send|regenerate CONVERSATION_ID [TEXT]`.
 */
import { appFixture, streamCall } from './app-fixture'

const [dir, models, action, conversationId, content] = process.argv.slice(2)
if (dir === undefined || models === undefined || conversationId === undefined || (action !== 'send' && action !== 'regenerate')) {
  throw new Error('usage: chat-child.ts DIR MODELS send|regenerate CONVERSATION_ID [TEXT]')
}
const f = appFixture({ dir, modelDirs: [models] })
try {
  const request = action === 'send' ? { requestId: 'child-1', conversationId, content: content ?? '' } : { requestId: 'child-1', conversationId }
  const { outcome } = await streamCall(f.app, `chat:${action}`, request)
  if (!outcome.ok) throw new Error(`chat:${action} failed: ${outcome.error.name}: ${outcome.error.message}`)
  await f.app.chat.snapshotSaved()
  process.stdout.write(`${JSON.stringify(outcome.result)}\n`)
} finally {
  await f.dispose()
}
