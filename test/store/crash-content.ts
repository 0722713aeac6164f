/** @file Deterministic message content shared by the crash test and its writer process, so each side can recompute it. */

/** Messages vary from 100 to ~60,000 UTF-16 units, so a kill can land in the middle of a large write. */
const PATTERN = 'lorem ipsum café 🙂 日本語 "quoted" it\'s\n'

/** The full content of message `i` with role tag `tag` ('u' user, 'a' assistant). */
export function crashContent(i: number, tag: 'u' | 'a'): string {
  const length = 100 + ((i * 7919 + (tag === 'a' ? 3571 : 0)) % 60_000)
  const head = `${tag}${i}: `
  const body = PATTERN.repeat(Math.ceil(length / PATTERN.length))
  const text = (head + body).slice(0, length)
  // Never end on half a surrogate pair.
  return /[\uD800-\uDBFF]$/.test(text) ? text.slice(0, -1) : text
}

/** How an assistant reply is streamed: this many setContent rewrites, each a longer prefix. */
export const CRASH_CHUNKS = 5

/** Where each rewrite of a reply ends (UTF-16 offsets), never splitting a surrogate pair. */
export function chunkEnds(text: string): number[] {
  const ends: number[] = []
  for (let k = 1; k <= CRASH_CHUNKS; k++) {
    let end = Math.floor((text.length * k) / CRASH_CHUNKS)
    if (end > 0 && end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1])) end += 1
    ends.push(end)
  }
  return ends
}

/** What the writer tells the parent after each committed write. */
export interface CrashAck {
  readonly id: string
  /** index of the exchange; the content is crashContent(i, tag) */
  readonly i: number
  readonly tag: 'u' | 'a'
  /** UTF-16 units of content committed so far */
  readonly length: number
  readonly done: boolean
}
