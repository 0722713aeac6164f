/**
 * @file ONNX Runtime through its C API: the process's env, plugin execution-provider libraries, and the EP
 * devices they bring (each typed CPU / GPU / NPU by the runtime). Plain data comes out (`EpDeviceInfo`), so the
 * CLI and the UI can list devices; the native handles stay in here.
 */
import { OrtCLibrary, readCString, readPointers, type Ptr } from './library'

/** The hardware behind an EP device, as ONNX Runtime types it (`OrtHardwareDeviceType`). */
export const HARDWARE_TYPES = Object.freeze(['cpu', 'gpu', 'npu'] as const)

/** One of HARDWARE_TYPES. */
export type HardwareType = (typeof HARDWARE_TYPES)[number]

/** One EP device: an execution provider paired with one hardware device (plain JSON). */
export interface EpDeviceInfo {
  /** execution provider name, e.g. "CPUExecutionProvider", "OpenVINOExecutionProvider" */
  readonly epName: string
  readonly epVendor: string
  readonly hardwareType: HardwareType
  /** hardware vendor name as the runtime or the provider reports it (e.g. "AMD", "Intel") */
  readonly hardwareVendor: string
  readonly vendorId: number
  readonly deviceId: number
  /** hardware metadata (e.g. "Description", "IsVirtual") */
  readonly hardwareMetadata: Readonly<Record<string, string>>
  /** what the provider says about itself for this device */
  readonly epMetadata: Readonly<Record<string, string>>
  /** the provider's default options for this device */
  readonly epOptions: Readonly<Record<string, string>>
  /** the registration name of the library that brought it; null for providers built into the runtime */
  readonly library: string | null
}

/** Which EP device a session should use: the first one matching every given field. */
export interface EpDeviceSelector {
  readonly epName: string
  readonly hardwareType?: HardwareType
  readonly deviceId?: number
}

/** ORT logging levels (`OrtLoggingLevel`): warnings and errors reach the console, nothing chattier. */
const LOG_WARNING = 2

/**
 * Providers compiled into ONNX Runtime builds (onnxruntime-node reaches them itself); every other EP came from a
 * registered library.
 */
export const BUILT_IN_EPS: ReadonlySet<string> = new Set(['CPUExecutionProvider', 'DmlExecutionProvider', 'WebGpuExecutionProvider', 'CoreMLExecutionProvider'])

/** A provider library registered with the env. */
export interface RegisteredLibrary {
  readonly name: string
  readonly path: string
  /** EP names that appeared when it was registered */
  readonly eps: readonly string[]
}

/** Longest registration name accepted (ORT keys the library by it; it also becomes part of config keys). */
export const MAX_REGISTRATION_NAME_LENGTH = 64

/** Registration names: letters, digits, '.', '_' and '-' (they appear in logs and settings). */
const REGISTRATION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/** Checks a provider library's registration name; throws a RangeError that says what is wrong. */
export function checkRegistrationName(name: string): void {
  if (name.length === 0 || name.length > MAX_REGISTRATION_NAME_LENGTH || !REGISTRATION_NAME.test(name)) {
    throw new RangeError(
      `a provider library's name must be 1–${MAX_REGISTRATION_NAME_LENGTH} letters, digits, '.', '_' or '-' (starting with a letter or digit), got ${JSON.stringify(name)}`
    )
  }
}

/** The process's ONNX Runtime as the C API sees it: one per library file, shared by every caller. */
export class OrtCRuntime {
  readonly lib: OrtCLibrary
  readonly env: Ptr
  private readonly libraries = new Map<string, RegisteredLibrary>()
  private memoryInfo: Ptr = null

  private constructor(lib: OrtCLibrary, env: Ptr) {
    this.lib = lib
    this.env = env
  }

  /**
   * The runtime for the library at `libraryPath` (default: onnxruntime-node's). ONNX Runtime keeps one env
   * per process and hands it to every `CreateEnv`, so this shares the env onnxruntime-node made.
   */
  static open(libraryPath?: string): OrtCRuntime {
    const lib = OrtCLibrary.load(libraryPath)
    let runtime = runtimes.get(lib)
    if (!runtime) {
      const env: [Ptr] = [null]
      lib.check('CreateEnv', LOG_WARNING, 'tandem', env)
      runtime = new OrtCRuntime(lib, env[0])
      runtimes.set(lib, runtime)
    }
    return runtime
  }

  get version(): string {
    return this.lib.version
  }

  /** Registered provider libraries, in registration order. */
  registeredLibraries(): RegisteredLibrary[] {
    return [...this.libraries.values()]
  }

  /**
   * Registers a plugin EP library (VitisAI, OpenVINO, QNN, our virtual NPU, …) under `name`. Errors carry the
   * runtime's message (a missing file, a library without `CreateEpFactories`, a name already taken).
   */
  registerProviderLibrary(name: string, path: string): RegisteredLibrary {
    checkRegistrationName(name)
    if (this.libraries.has(name)) throw new Error(`a provider library is already registered as "${name}" (${this.libraries.get(name)?.path})`)
    const before = new Set(this.epDevices().map((d) => d.epName))
    this.lib.check('RegisterExecutionProviderLibrary', this.env, name, path)
    const eps = [...new Set(this.epDevices().map((d) => d.epName).filter((ep) => !before.has(ep)))]
    const registered: RegisteredLibrary = { name, path, eps }
    this.libraries.set(name, registered)
    return registered
  }

  /** Unregisters a library registered under `name` (its devices disappear; sessions using it must be released first). */
  unregisterProviderLibrary(name: string): void {
    if (!this.libraries.has(name)) throw new Error(`no provider library is registered as "${name}"`)
    this.lib.check('UnregisterExecutionProviderLibrary', this.env, name)
    this.libraries.delete(name)
  }

  /** The EP devices the runtime knows now (built-in providers and those of registered libraries). */
  epDevices(): EpDeviceInfo[] {
    return this.epDeviceHandles().map(({ info }) => info)
  }

  /** The native handle of the first EP device matching `selector`; throws when none does. */
  epDeviceHandle(selector: EpDeviceSelector): Ptr {
    const found = this.epDeviceHandles().find(({ info }) => matches(info, selector))
    if (!found) {
      const known = this.epDevices().map((d) => `${d.epName} (${d.hardwareType})`).join(', ')
      throw new Error(`no EP device matches ${JSON.stringify(selector)}; the runtime has: ${known || 'none'}`)
    }
    return found.handle
  }

  /** A CPU `OrtMemoryInfo` for tensors over JS memory (made once, kept for the runtime's life). */
  cpuMemoryInfo(): Ptr {
    if (this.memoryInfo === null) {
      const out: [Ptr] = [null]
      this.lib.check('CreateCpuMemoryInfo', 0 /* OrtDeviceAllocator */, 0 /* OrtMemTypeDefault */, out)
      this.memoryInfo = out[0]
    }
    return this.memoryInfo
  }

  private epDeviceHandles(): { handle: Ptr; info: EpDeviceInfo }[] {
    const list: [Ptr] = [null]
    const count: [number] = [0]
    this.lib.check('GetEpDevices', this.env, list, count)
    return readPointers(list[0], Number(count[0])).map((handle) => ({ handle, info: this.describe(handle) }))
  }

  private describe(device: Ptr): EpDeviceInfo {
    const lib = this.lib
    const hw = lib.pointer('EpDevice_Device', device)
    const epName = lib.string('EpDevice_EpName', device)
    const type = lib.number('HardwareDevice_Type', hw)
    return {
      epName,
      epVendor: lib.string('EpDevice_EpVendor', device),
      hardwareType: HARDWARE_TYPES[type] ?? 'cpu',
      hardwareVendor: lib.string('HardwareDevice_Vendor', hw),
      vendorId: lib.number('HardwareDevice_VendorId', hw),
      deviceId: lib.number('HardwareDevice_DeviceId', hw),
      hardwareMetadata: this.keyValues(lib.pointer('HardwareDevice_Metadata', hw)),
      epMetadata: this.keyValues(lib.pointer('EpDevice_EpMetadata', device)),
      epOptions: this.keyValues(lib.pointer('EpDevice_EpOptions', device)),
      library: BUILT_IN_EPS.has(epName) ? null : (this.registeredLibraries().find((l) => l.eps.includes(epName))?.name ?? null)
    }
  }

  private keyValues(kvps: Ptr): Record<string, string> {
    if (kvps === null) return {}
    const keys: [Ptr] = [null]
    const values: [Ptr] = [null]
    const count: [number] = [0]
    this.lib.call('GetKeyValuePairs', kvps, keys, values, count)
    const n = Number(count[0])
    const k = readPointers(keys[0], n)
    const v = readPointers(values[0], n)
    const out: Record<string, string> = {}
    for (let i = 0; i < n; i++) out[readCString(k[i] ?? null)] = readCString(v[i] ?? null)
    return out
  }
}

const runtimes = new Map<OrtCLibrary, OrtCRuntime>()

function matches(d: EpDeviceInfo, s: EpDeviceSelector): boolean {
  return d.epName === s.epName && (s.hardwareType === undefined || d.hardwareType === s.hardwareType) && (s.deviceId === undefined || d.deviceId === s.deviceId)
}
