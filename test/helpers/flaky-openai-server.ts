/**
 * @file A small OpenAI-compatible server on loopback that misbehaves on purpose, for the tests of other servers as
 * backends: it lists one model, and answers a completion as `behaviour` says — two pieces then a dropped connection,
 * one piece then nothing ever (a stall), an error frame mid-stream, HTTP 500 with OpenAI's error shape, or 401. Given
 * a `key`, a request carrying another one is refused with 401 (one without a key is served). The request body is
 * read to its end before the answer, so a dropped stream ends with a plain FIN after its frames, never a reset that
 * could discard them.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** The one model it lists. */
export const FLAKY_MODEL = 'flaky-7b'

export type FlakyBehaviour = 'stall' | 'drop' | 'error-frame' | 'error-500' | 'refuse-key'

export interface FlakyServer {
  /** its base URL, ending in /v1 */
  readonly url: string
  /** the one model it lists */
  readonly model: string
  /** how it answers the next completions */
  behaviour: FlakyBehaviour
  close(): Promise<void>
}

/** The SSE frame of one chat piece. */
export function chatFrame(content: string): string {
  return `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`
}

/** Starts it on 127.0.0.1 at a free port. */
export async function startFlakyServer(options: { readonly behaviour?: FlakyBehaviour; readonly key?: string } = {}): Promise<FlakyServer> {
  const state = { behaviour: options.behaviour ?? 'drop' }
  const answer = (req: IncomingMessage, res: ServerResponse): void => {
    const json = (status: number, body: unknown): void => void res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body))
    const auth = req.headers.authorization
    const wrongKey = options.key !== undefined && auth !== undefined && auth !== `Bearer ${options.key}`
    if (state.behaviour === 'refuse-key' || wrongKey) return json(401, { error: { message: 'Invalid API key provided.' } })
    if (req.url === '/v1/models') return json(200, { object: 'list', data: [{ id: FLAKY_MODEL, object: 'model' }] })
    if (state.behaviour === 'error-500') return json(500, { error: { message: 'CUDA out of memory' } })
    res.writeHead(200, { 'Content-Type': 'text/event-stream' })
    res.write(chatFrame('Once upon'))
    if (state.behaviour === 'drop') res.write(chatFrame(' a time'), () => res.socket?.end())
    else if (state.behaviour === 'error-frame') res.end(`data: ${JSON.stringify({ error: { message: 'model unloaded' } })}\n\n`)
    // 'stall': nothing more, ever
  }
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => answer(req, res))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    model: FLAKY_MODEL,
    get behaviour() {
      return state.behaviour
    },
    set behaviour(b: FlakyBehaviour) {
      state.behaviour = b
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    }
  }
}
