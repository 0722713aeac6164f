/** @file The renderer's pure pieces of file summaries: base64 in chunks, the size refusal, the progress text and time left. */
import { describe, expect, it } from 'vitest'
import { API_LIMITS } from '../../preload/api'
import { BASE64_CHUNK_BYTES, bytesToBase64 } from '../../renderer/src/lib/base64'
import { fileSizeProblem, SUMMARIZE_ACCEPT } from '../../renderer/src/lib/documents'
import { formatSummaryProgress, formatTimeLeft } from '../../renderer/src/lib/format'

/** Deterministic bytes (all 256 values occur). */
function bytesOf(length: number): Uint8Array {
  const out = new Uint8Array(length)
  let x = 12345
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    out[i] = x >>> 24
  }
  return out
}

describe('bytesToBase64', () => {
  it('matches the standard encoding at every length around a chunk boundary', () => {
    for (const length of [0, 1, 2, 3, 4, 5, BASE64_CHUNK_BYTES - 1, BASE64_CHUNK_BYTES, BASE64_CHUNK_BYTES + 1, BASE64_CHUNK_BYTES + 2, 3 * BASE64_CHUNK_BYTES + 7]) {
      const bytes = bytesOf(length)
      expect(bytesToBase64(bytes), `length ${length}`).toBe(Buffer.from(bytes).toString('base64'))
    }
  })

  it('encodes a few MiB (more than one call could spread) and a view into a larger buffer', () => {
    const big = bytesOf(3 * 2 ** 20 + 1)
    expect(bytesToBase64(big)).toBe(Buffer.from(big).toString('base64'))
    const view = big.subarray(5, 5 + BASE64_CHUNK_BYTES + 4)
    expect(bytesToBase64(view)).toBe(Buffer.from(view).toString('base64'))
  })
})

describe('file size refusal', () => {
  it('refuses only files over the limit, naming the file, its size and the limit', () => {
    expect(fileSizeProblem('a.pdf', 0)).toBeNull()
    expect(fileSizeProblem('a.pdf', API_LIMITS.maxDocumentBytes)).toBeNull()
    expect(fileSizeProblem('report.pdf', 1e9)).toBe('report.pdf is 1.0 GB; files up to 64 MiB can be summarized.')
    expect(fileSizeProblem('big.txt', API_LIMITS.maxDocumentBytes + 1)).toBe('big.txt is 67 MB; files up to 64 MiB can be summarized.')
  })

  it('the picker offers the document types and source files', () => {
    const accepted = SUMMARIZE_ACCEPT.split(',')
    for (const ext of ['.pdf', '.docx', '.md', '.html', '.csv', '.jsonl', '.ts', '.py', '.zig']) expect(accepted).toContain(ext)
    expect(new Set(accepted).size).toBe(accepted.length)
  })
})

describe('summary progress text', () => {
  it('says what happens in each phase, with the time left once known', () => {
    expect(formatSummaryProgress('a.pdf', { phase: 'reading', done: 0, total: 0, etaMs: null })).toBe('Reading a.pdf…')
    expect(formatSummaryProgress('a.pdf', { phase: 'summarizing', done: 0, total: 0, etaMs: null })).toBe('Summarizing a.pdf…')
    expect(formatSummaryProgress('a.pdf', { phase: 'summarizing', done: 0, total: 7, etaMs: null })).toBe('Summarizing a.pdf: part 0 of 7')
    expect(formatSummaryProgress('a.pdf', { phase: 'summarizing', done: 3, total: 7, etaMs: 41_200 })).toBe('Summarizing a.pdf: part 3 of 7 · about 42 s left')
    expect(formatSummaryProgress('a.pdf', { phase: 'summarizing', done: 7, total: 7, etaMs: 0 })).toBe('Summarizing a.pdf: part 7 of 7')
  })

  it('rounds the time left to seconds, minutes or hours', () => {
    expect(formatTimeLeft(0)).toBe('about 1 s left')
    expect(formatTimeLeft(59_000)).toBe('about 59 s left')
    expect(formatTimeLeft(60_000)).toBe('about 1 min left')
    expect(formatTimeLeft(150_000)).toBe('about 3 min left')
    expect(formatTimeLeft(2.4 * 3_600_000)).toBe('about 2 h left')
  })
})
