/** @file Whether this machine's WebGPU can only be Mesa lavapipe (the CI and dev machines install Mesa 25). */
import { listGpuNodes, listVulkanIcds } from '../../main/engine/devices'

/** true when a lavapipe Vulkan ICD is installed. */
export const hasLavapipe = process.platform === 'linux' && listVulkanIcds().some((i) => i.lavapipe)

/** true when a hardware GPU node exists (then WebGPU may pick real hardware and the lavapipe tests do not apply). */
export const hasGpuNode = listGpuNodes().length > 0

/** true under TANDEM_SKIP_SYSTEM_TESTS=1: the machine may lack Mesa's Vulkan driver, so no test may need WebGPU. */
export const systemTestsSkipped = process.env.TANDEM_SKIP_SYSTEM_TESTS === '1'

/** The first reason that applies, in order: told to skip, no lavapipe, possibly real hardware. */
function skipReason(): string | null {
  // `npm test` installs Mesa first or stops (scripts/system-deps.sh), unless told to leave these tests out.
  if (systemTestsSkipped) return 'TANDEM_SKIP_SYSTEM_TESTS=1'
  if (!hasLavapipe) return 'no lavapipe ICD in /usr/share/vulkan/icd.d (apt-get install -t bookworm-backports mesa-vulkan-drivers)'
  if (hasGpuNode) return 'a hardware GPU node exists, so WebGPU may not be lavapipe'
  return null
}

/** Why the WebGPU-on-lavapipe tests are skipped, or null when they run. */
export const lavapipeSkipReason: string | null = skipReason()
