/** @file Whether this machine's WebGPU can only be Mesa lavapipe (the CI and dev machines install Mesa 25). */
import { listGpuNodes, listVulkanIcds } from '../../main/engine/devices'

/** true when a lavapipe Vulkan ICD is installed. */
export const hasLavapipe = process.platform === 'linux' && listVulkanIcds().some((i) => i.lavapipe)

/** true when a hardware GPU node exists (then WebGPU may pick real hardware and the lavapipe tests do not apply). */
export const hasGpuNode = listGpuNodes().length > 0

/** Why the WebGPU-on-lavapipe tests are skipped, or null when they run. */
export const lavapipeSkipReason: string | null = !hasLavapipe
  ? 'no lavapipe ICD in /usr/share/vulkan/icd.d (apt-get install -t bookworm-backports mesa-vulkan-drivers)'
  : hasGpuNode
    ? 'a hardware GPU node exists, so WebGPU may not be lavapipe'
    : null
