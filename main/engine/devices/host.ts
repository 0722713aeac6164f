/**
 * @file What the host says about its CPU and GPU, without ONNX Runtime. onnxruntime-node 1.30 exposes no
 * WebGPU adapter info (no API; even verbose logs only print instance/device pointers), so on Linux the GPU
 * behind WebGPU is inferred from the Vulkan loader's driver manifests (ICD JSON files) and the kernel's GPU
 * device nodes: Mesa's lavapipe ICD present and no GPU node means Dawn can only have found lavapipe, a
 * Vulkan implementation running on the CPU.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { availableParallelism, cpus } from 'node:os'
import { basename, join } from 'node:path'
import type { DeviceKind } from './device'

/** Folders the Vulkan loader searches for driver manifests on Linux (besides $VK_DRIVER_FILES / $VK_ICD_FILENAMES). */
export const VULKAN_ICD_DIRS: readonly string[] = Object.freeze(['/usr/share/vulkan/icd.d', '/usr/local/share/vulkan/icd.d', '/etc/vulkan/icd.d'])

/** Largest ICD manifest we read; real ones are ~150 bytes. */
const MAX_ICD_MANIFEST_BYTES = 64 * 1024

/** The CPU as a device name: model string and logical core count. */
export interface CpuDescription {
  /** e.g. "AMD EPYC" (os.cpus()[0].model, trimmed) */
  readonly model: string
  /** logical cores the process may use (os.availableParallelism) */
  readonly cores: number
}

/** Describes the CPU from os.cpus() / os.availableParallelism(). */
export function describeCpu(): CpuDescription {
  const first = cpus()[0]
  const model = first?.model.replace(/\s+/g, ' ').trim() ?? ''
  return { model: model === '' ? 'unknown model' : model, cores: Math.max(1, availableParallelism()) }
}

/** One Vulkan driver manifest. */
export interface VulkanIcd {
  readonly path: string
  /** library_path from the manifest, '' when unreadable */
  readonly library: string
  /** true for Mesa lavapipe (lvp_icd*.json / libvulkan_lvp.so) */
  readonly lavapipe: boolean
}

/** What the host suggests is behind the WebGPU EP. */
export interface GpuGuess {
  readonly name: string
  readonly kind: DeviceKind
  readonly software: boolean
  /** how this was determined, in words (shown to the user) */
  readonly detection: string
}

/** Reads the Vulkan driver manifests the loader would use (Linux). */
export function listVulkanIcds(env: NodeJS.ProcessEnv = process.env, dirs: readonly string[] = VULKAN_ICD_DIRS): VulkanIcd[] {
  const override = env.VK_DRIVER_FILES ?? env.VK_ICD_FILENAMES
  const files: string[] = []
  if (override !== undefined && override !== '') {
    files.push(...override.split(':').filter((f) => f !== ''))
  } else {
    for (const dir of dirs) {
      if (!existsSync(dir)) continue
      for (const f of readdirSync(dir).sort()) if (f.endsWith('.json')) files.push(join(dir, f))
    }
  }
  return files.map((path) => {
    const library = icdLibrary(path)
    return { path, library, lavapipe: basename(path).startsWith('lvp_icd') || basename(library).startsWith('libvulkan_lvp') }
  })
}

/** library_path of a manifest, '' when it cannot be read or is not the expected shape. */
function icdLibrary(path: string): string {
  try {
    const text = readFileSync(path, 'utf8')
    if (text.length > MAX_ICD_MANIFEST_BYTES) return ''
    const v: unknown = JSON.parse(text)
    if (typeof v !== 'object' || v === null || !('ICD' in v)) return ''
    const icd: unknown = v.ICD
    if (typeof icd !== 'object' || icd === null || !('library_path' in icd)) return ''
    return typeof icd.library_path === 'string' ? icd.library_path : ''
  } catch {
    return ''
  }
}

/** GPU device nodes a hardware Vulkan driver would open: DRM render nodes and NVIDIA's proprietary nodes. */
export function listGpuNodes(): string[] {
  const nodes: string[] = []
  if (existsSync('/dev/dri')) for (const f of readdirSync('/dev/dri')) if (f.startsWith('renderD')) nodes.push(`/dev/dri/${f}`)
  if (existsSync('/dev')) for (const f of readdirSync('/dev')) if (/^nvidia\d+$/.test(f)) nodes.push(`/dev/${f}`)
  return nodes.sort()
}

/** PCI vendor id of a DRM render node ("0x8086"), or null. */
function renderNodeVendor(node: string): string | null {
  const sysfs = `/sys/class/drm/${basename(node)}/device/vendor`
  try {
    return readFileSync(sysfs, 'utf8').trim().toLowerCase()
  } catch {
    return null
  }
}

/** Names and classifies the GPU the WebGPU EP will most likely use on this host. */
export function guessWebGpuAdapter(platform: NodeJS.Platform = process.platform): GpuGuess {
  if (platform === 'darwin') {
    return { name: 'GPU (Metal via WebGPU)', kind: 'igpu', software: false, detection: 'macOS: WebGPU runs on Metal; assumed the integrated GPU (ORT exposes no adapter info)' }
  }
  if (platform === 'win32') {
    return { name: 'GPU (Direct3D 12 via WebGPU)', kind: 'igpu', software: false, detection: 'Windows: adapter not identified (ORT exposes no adapter info); kind assumed integrated' }
  }
  const icds = listVulkanIcds()
  const nodes = listGpuNodes()
  const lavapipe = icds.find((i) => i.lavapipe)
  const icdSummary = icds.length === 0 ? 'no Vulkan ICD manifests' : `Vulkan ICDs: ${icds.map((i) => basename(i.path)).join(', ')}`
  if (nodes.length === 0) {
    if (lavapipe !== undefined) {
      return {
        name: 'Software GPU (Mesa lavapipe via WebGPU)',
        kind: 'software-gpu',
        software: true,
        detection: `ORT exposes no adapter info; ${basename(lavapipe.path)} present and no GPU device node (/dev/dri/renderD*, /dev/nvidia*), so the only usable Vulkan driver is lavapipe (runs on the CPU). ${icdSummary}`
      }
    }
    return { name: 'GPU via WebGPU (no Vulkan driver found)', kind: 'software-gpu', software: true, detection: `no GPU device node and no lavapipe ICD; ${icdSummary}` }
  }
  // A hardware node exists: Dawn prefers it over lavapipe (high-performance power preference). Kind from the PCI vendor.
  const vendors = nodes.map(renderNodeVendor).filter((v): v is string => v !== null)
  const nvidia = vendors.includes('0x10de') || nodes.some((n) => n.startsWith('/dev/nvidia'))
  const vendorName = nvidia ? 'NVIDIA' : vendors.includes('0x1002') ? 'AMD' : vendors.includes('0x8086') ? 'Intel' : 'unknown vendor'
  return {
    name: `GPU (${vendorName}, Vulkan via WebGPU)`,
    kind: nvidia ? 'dgpu' : 'igpu',
    software: false,
    detection: `ORT exposes no adapter info; GPU device nodes ${nodes.join(', ')} (PCI vendor ${vendors.join(', ') || 'unknown'}); kind guessed from the vendor. ${icdSummary}`
  }
}
