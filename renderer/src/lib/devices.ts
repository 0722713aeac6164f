/**
 * @file How devices are described in the UI: kind and status in words, and an honest note for the ones that
 * are not separate hardware (a GPU emulated on the CPU, a second CPU worker on the same cores). Pure.
 */
import type { DeviceKindName, DeviceView, PresetName } from '../../../preload/api'

const KIND_LABELS: Readonly<Record<DeviceKindName, string>> = {
  cpu: 'CPU',
  igpu: 'Integrated GPU',
  dgpu: 'GPU',
  npu: 'NPU',
  'software-gpu': 'Software GPU'
}

/** "Integrated GPU", "Software GPU", ... */
export function kindLabel(kind: DeviceKindName): string {
  return KIND_LABELS[kind]
}

/** Why a software device is labelled so: one sentence. */
export function softwareNote(device: DeviceView): string {
  if (device.kind === 'software-gpu') return 'A GPU emulated on the CPU: it shares the CPU cores and is not separate hardware.'
  if (device.kind === 'cpu') return 'An extra worker on the same CPU cores: not separate hardware.'
  return 'Not separate hardware: it runs on the CPU cores.'
}

/** "Ready", "Failed: <reason>", "Unavailable: <reason>", "Not tested". */
export function statusText(device: DeviceView): string {
  const reason = device.reason === null || device.reason.trim() === '' ? '' : `: ${device.reason.trim()}`
  switch (device.status) {
    case 'ready':
      return 'Ready'
    case 'failed':
      return `Failed${reason}`
    case 'unavailable':
      return `Unavailable${reason}`
    case 'unprobed':
      return `Not tested${reason}`
  }
}

/** A device id's display name, or the id itself when the list does not have it. */
export function deviceName(id: string, devices: readonly DeviceView[]): string {
  return devices.find((d) => d.id === id)?.name ?? id
}

/** The presets with their labels and a one-line description, in the order the panel lists them. */
export const PRESETS: readonly { readonly id: PresetName; readonly label: string; readonly help: string }[] = [
  { id: 'cpu', label: 'CPU only', help: 'Everything on the CPU.' },
  { id: 'gpu', label: 'GPU only', help: 'Everything on the best GPU (the CPU when there is none).' },
  { id: 'npu-prefill-gpu-decode', label: 'Prefill on NPU, decode on GPU', help: 'The prompt on the NPU, new words on the GPU; stand-ins are named when a device is missing.' },
  { id: 'layer-split', label: 'Layer split', help: 'Matrix multiplications on one device, everything else on another.' },
  { id: 'tensor-split', label: 'Tensor split', help: 'Each matrix multiplication split between two devices.' },
  { id: 'auto', label: 'Auto', help: 'Measures the devices with this model and picks the fastest placement.' }
]
