/**
 * The default compute threads: physical cores counted from the kernel's CPU topology among the CPUs the process
 * may use — on a sysfs tree the test writes (hyperthread siblings, two packages, CPUs outside the list) and on
 * this machine's real one.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { defaultIntraOpThreads } from '../../main/engine/devices'
import { parseCpuList, physicalCores } from '../../main/engine/devices/cpu-cores'
import { tempDir } from '../helpers/paths'

const scratch = tempDir('tandem-cpus-')
afterAll(() => scratch.dispose())

/** Writes cpuN/topology/{physical_package_id,core_id} for each [package, core]. */
function sysfs(name: string, cpus: ReadonlyArray<readonly [number, number]>): string {
  const root = join(scratch.dir, name)
  cpus.forEach(([pkg, core], cpu) => {
    const dir = join(root, `cpu${cpu}`, 'topology')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'physical_package_id'), `${pkg}\n`)
    writeFileSync(join(dir, 'core_id'), `${core}\n`)
  })
  mkdirSync(join(root, 'cpufreq'), { recursive: true }) // not a CPU
  return root
}

describe('parseCpuList', () => {
  it('reads ranges and single CPUs, and refuses what is not a list', () => {
    expect(parseCpuList('0-3,8,10-11\n')).toEqual([0, 1, 2, 3, 8, 10, 11])
    expect(parseCpuList('5')).toEqual([5])
    for (const bad of ['', '3-1', 'a', '0-', '1,,2', '0-99999']) expect(parseCpuList(bad)).toBeNull()
  })
})

describe('physicalCores', () => {
  it('counts hyperthread siblings once', () => {
    const root = sysfs('smt', [[0, 0], [0, 1], [0, 0], [0, 1]])
    expect(physicalCores([0, 1, 2, 3], root)).toBe(2)
  })

  it('tells cores of two packages apart, and counts only the CPUs asked for', () => {
    const root = sysfs('two-packages', [[0, 0], [0, 1], [1, 0], [1, 1]])
    expect(physicalCores([0, 1, 2, 3], root)).toBe(4)
    expect(physicalCores([2, 3, 9], root)).toBe(2)
  })

  it('is null when the topology cannot be read', () => {
    expect(physicalCores([0], join(scratch.dir, 'missing'))).toBeNull()
  })
})

describe('defaultIntraOpThreads', () => {
  it('leaves ORT its own count outside Linux', () => {
    expect(defaultIntraOpThreads('darwin')).toBeUndefined()
    expect(defaultIntraOpThreads('win32')).toBeUndefined()
  })

  it.runIf(process.platform === 'linux')("is this machine's physical cores among the allowed CPUs", () => {
    const allowed = parseCpuList(/^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '') ?? []
    const cores = new Set(
      allowed
        .filter((cpu) => readdirSync('/sys/devices/system/cpu').includes(`cpu${cpu}`))
        .map((cpu) => ['physical_package_id', 'core_id'].map((f) => readFileSync(`/sys/devices/system/cpu/cpu${cpu}/topology/${f}`, 'utf8').trim()).join(':'))
    )
    expect(defaultIntraOpThreads()).toBe(Math.min(cores.size, availableParallelism()))
    expect(defaultIntraOpThreads()).toBeGreaterThanOrEqual(1)
  })
})
