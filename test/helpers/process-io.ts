/** @file What this process has read, for tests that assert a loader did not read a file whole. */
import { readFileSync } from 'node:fs'

/** Bytes this process has read through read() calls so far (Linux /proc/self/io rchar), or null where there is no such file. */
export function bytesReadByProcess(): number | null {
  let io: string
  try {
    io = readFileSync('/proc/self/io', 'utf8')
  } catch {
    return null
  }
  const m = /^rchar:\s*(\d+)$/m.exec(io)
  return m === null ? null : Number(m[1])
}
