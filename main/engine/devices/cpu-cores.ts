/**
 * @file How many threads a model's session computes with when the user sets none: the physical cores this
 * process may run on, as the operating system schedules them.
 *
 * ONNX Runtime's own default (intra-op threads 0) counts cores with cpuinfo, which believes the CPUID
 * instruction. Virtual machines often advertise hyperthreading there ('ht') while each vCPU is a core of its
 * own to the kernel, and cpuinfo then halves the count: on a 2-vCPU VM it computed on one thread, and prefill
 * ran at about half the speed `--threads 2` gives. The kernel's topology is what the scheduler uses, so on Linux
 * we count distinct (package, core) pairs among the CPUs this process is allowed on. Elsewhere ORT's count is
 * right on real hardware (hyperthread siblings share one core's FPUs, and GEMM gains nothing from both), so
 * it stays.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'

/** Where Linux describes each CPU's place (sysfs). */
const CPU_SYSFS = '/sys/devices/system/cpu'

/** Most CPUs read from sysfs; more than any laptop or workstation has, and a bound on the loop. */
const MAX_CPUS = 4096

/** Parses a Linux CPU list such as "0-3,8,10-11" (Cpus_allowed_list, online); null when malformed. */
export function parseCpuList(text: string): number[] | null {
  const cpus: number[] = []
  for (const part of text.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part)
    if (m === null) return null
    const first = Number(m[1])
    const last = m[2] === undefined ? first : Number(m[2])
    if (last < first || last >= MAX_CPUS) return null
    for (let cpu = first; cpu <= last; cpu++) cpus.push(cpu)
  }
  return cpus
}

/** The CPUs this process may run on (its affinity), from /proc/self/status; null when unreadable. */
function allowedCpus(): number[] | null {
  try {
    const m = /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))
    return m === null ? null : parseCpuList(m[1])
  } catch {
    return null
  }
}

/** Physical cores among `cpus`: distinct (package, core) pairs in sysfs; null when the topology is unreadable. */
export function physicalCores(cpus: readonly number[], sysfs = CPU_SYSFS): number | null {
  const cores = new Set<string>()
  try {
    const present = new Set(readdirSync(sysfs).filter((name) => /^cpu\d+$/.test(name)))
    for (const cpu of cpus) {
      const dir = `cpu${cpu}`
      if (!present.has(dir)) continue
      const read = (file: string): string => readFileSync(join(sysfs, dir, 'topology', file), 'utf8').trim()
      cores.add(`${read('physical_package_id')}:${read('core_id')}`)
    }
  } catch {
    return null
  }
  return cores.size > 0 ? cores.size : null
}

let cached: number | undefined | null = null

/**
 * Intra-op threads for a session when none is given: on Linux the physical cores this process may use
 * (never more than Node's available parallelism); elsewhere undefined, which leaves ORT's own default.
 */
export function defaultIntraOpThreads(platform: NodeJS.Platform = process.platform): number | undefined {
  if (platform !== 'linux') return undefined
  if (cached !== null) return cached
  const cpus = allowedCpus()
  const cores = cpus === null ? null : physicalCores(cpus)
  cached = cores === null ? undefined : Math.min(cores, availableParallelism())
  return cached
}
