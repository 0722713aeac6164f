/**
 * @file How busy the rest of the machine was during a timed run (Linux /proc): all CPUs' busy ticks
 * minus those of the measured child and of this process, as a share of the machine's capacity. On a
 * shared 2-core box this tells a slow rep caused by other work from a slow engine.
 */
import { readFileSync } from 'node:fs'

/** A point-in-time reading of CPU ticks (USER_HZ, usually 100/s). */
export interface CpuSnapshot {
  /** busy ticks of all CPUs (user, nice, system, irq, softirq, steal) */
  readonly machineBusy: number
  /** all ticks of all CPUs, idle included */
  readonly machineTotal: number
  /** user + system ticks of the measured process (all its threads) and of this process */
  readonly ownBusy: number
}

/** user + system ticks (USER_HZ) of process `pid` so far, all its threads; throws without /proc. */
export function processTicks(pid: number): number {
  // fields after the parenthesized command name; utime and stime are fields 14 and 15 of the line
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(rest[11]) + Number(rest[12])
}

/** Reads the counters, or null where /proc is not available. */
export function cpuSnapshot(childPid: number | undefined): CpuSnapshot | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]
    const v = line.trim().split(/\s+/).slice(1).map(Number)
    // user nice system idle iowait irq softirq steal (guest time is already inside user)
    const [user, nice, system, idle, iowait, irq, softirq, steal] = v
    const machineBusy = user + nice + system + irq + softirq + (steal ?? 0)
    const machineTotal = machineBusy + idle + iowait
    const ownBusy = processTicks(process.pid) + (childPid === undefined ? 0 : processTicks(childPid))
    return { machineBusy, machineTotal, ownBusy }
  } catch {
    return null
  }
}

/** Percent of the machine's CPU capacity used by other processes between two snapshots, or null. */
export function otherCpuPct(before: CpuSnapshot | null, after: CpuSnapshot | null): number | null {
  if (!before || !after) return null
  const total = after.machineTotal - before.machineTotal
  if (total <= 0) return null
  const other = after.machineBusy - before.machineBusy - (after.ownBusy - before.ownBusy)
  return Math.max(0, Math.min(100, (100 * other) / total))
}
