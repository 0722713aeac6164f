/**
 * @file A request that announces a body of `bytes` and sends none of it, for tests of a host's body limit: the host
 * refuses it from the header alone. (Sending such a body would race the refusal: the host closes the connection
 * while the client is still writing, and the client may see ECONNRESET instead of the answer.)
 */
import { request } from 'node:http'

export interface AnnouncedResponse {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: string
}

/** POSTs headers announcing `bytes` of body to 127.0.0.1:`port``path` and resolves with the answer. */
export function announceBody(port: number, path: string, headers: Record<string, string>, bytes: number): Promise<AnnouncedResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, headers: { ...headers, 'Content-Length': String(bytes) } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') })
        req.destroy()
      })
    })
    req.on('error', reject)
    req.flushHeaders()
  })
}
