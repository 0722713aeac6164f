/** @file Resident memory of a process (Linux /proc), for the soaks' "memory came back" checks. */
import { readFileSync } from 'node:fs'

/** Resident memory of a process, in bytes. */
export function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  if (m === null) throw new Error(`no VmRSS for process ${pid}`)
  return Number(m[1]) * 1024
}
