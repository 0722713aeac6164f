/**
 * @file The second gate to ONNX Runtime: its C API, reached through `koffi` (FFI with prebuilt binaries in its
 * npm package, so `npm ci` installs it offline). onnxruntime-node cannot register plugin execution providers,
 * list EP devices or bind buffers (toolchain notes §9); the C API can. By default this loads the very library
 * onnxruntime-node ships, so the process holds one runtime and sessions of both gates share its env.
 *
 * Only this file imports koffi. Functions are read from the `OrtApi` table by slot number: the table only ever
 * grows, so a slot checked against the header of API_VERSION stays valid in later runtimes (the test
 * `ort-c-slots` compiles the vendored header and compares every slot below with the compiler's `offsetof`).
 */
import { createRequire } from 'node:module'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import koffi, { type LibraryHandle, type TypeObject } from 'koffi'

/** The `OrtApi` version this binding asks for: the one of the vendored headers (ONNX Runtime 1.29+). */
export const ORT_C_API_VERSION = 29

/** A pointer as koffi passes it: a BigInt address, or null. */
export type Ptr = bigint | null

/** Error from an `OrtStatus`: ONNX Runtime's own message and error code (ORT_FAIL = 1, ORT_INVALID_ARGUMENT = 2, …). */
export class OrtCApiError extends Error {
  constructor(
    /** the C API function that failed */
    readonly func: string,
    readonly code: number,
    readonly ortMessage: string
  ) {
    super(`${func}: ${ortMessage}`)
    this.name = 'OrtCApiError'
  }
}

/**
 * Every C API function the binding calls: slot in `OrtApi` and its prototype in koffi's C-like syntax
 * (the name before the parenthesis is the slot's name). `OrtStatus*` results are checked by `check`;
 * paths are `ORTCHAR_T*`: UTF-16 on Windows.
 */
const FUNCTIONS = {
  CreateStatus: [0, 'void* CreateStatus(int code, const char* msg)', 'value'],
  GetErrorCode: [1, 'int GetErrorCode(void* status)', 'value'],
  GetErrorMessage: [2, 'const char* GetErrorMessage(void* status)', 'value'],
  CreateEnv: [3, 'void* CreateEnv(int level, const char* logid, _Out_ void** env)', 'status'],
  CreateSession: [7, 'void* CreateSession(void* env, PATH path, void* options, _Out_ void** session)', 'status'],
  CreateSessionFromArray: [8, 'void* CreateSessionFromArray(void* env, const void* data, size_t len, void* options, _Out_ void** session)', 'status'],
  Run: [9, 'void* Run(void* session, void* runOptions, const char** inputNames, void** inputs, size_t nIn, const char** outputNames, size_t nOut, _Inout_ void** outputs)', 'status'],
  CreateSessionOptions: [10, 'void* CreateSessionOptions(_Out_ void** options)', 'status'],
  SetSessionGraphOptimizationLevel: [23, 'void* SetSessionGraphOptimizationLevel(void* options, int level)', 'status'],
  SetIntraOpNumThreads: [24, 'void* SetIntraOpNumThreads(void* options, int n)', 'status'],
  SetInterOpNumThreads: [25, 'void* SetInterOpNumThreads(void* options, int n)', 'status'],
  SessionGetInputCount: [30, 'void* SessionGetInputCount(void* session, _Out_ size_t* n)', 'status'],
  SessionGetOutputCount: [31, 'void* SessionGetOutputCount(void* session, _Out_ size_t* n)', 'status'],
  SessionGetInputName: [36, 'void* SessionGetInputName(void* session, size_t i, void* allocator, _Out_ void** name)', 'status'],
  SessionGetOutputName: [37, 'void* SessionGetOutputName(void* session, size_t i, void* allocator, _Out_ void** name)', 'status'],
  CreateTensorAsOrtValue: [48, 'void* CreateTensorAsOrtValue(void* allocator, const int64_t* shape, size_t rank, int type, _Out_ void** value)', 'status'],
  CreateTensorWithDataAsOrtValue: [49, 'void* CreateTensorWithDataAsOrtValue(void* memoryInfo, void* data, size_t bytes, const int64_t* shape, size_t rank, int type, _Out_ void** value)', 'status'],
  GetTensorMutableData: [51, 'void* GetTensorMutableData(void* value, _Out_ void** data)', 'status'],
  GetTensorElementType: [60, 'void* GetTensorElementType(void* info, _Out_ int* type)', 'status'],
  GetDimensionsCount: [61, 'void* GetDimensionsCount(void* info, _Out_ size_t* n)', 'status'],
  GetDimensions: [62, 'void* GetDimensions(void* info, _Out_ int64_t* dims, size_t n)', 'status'],
  GetTensorTypeAndShape: [65, 'void* GetTensorTypeAndShape(void* value, _Out_ void** info)', 'status'],
  CreateCpuMemoryInfo: [69, 'void* CreateCpuMemoryInfo(int allocatorType, int memType, _Out_ void** info)', 'status'],
  AllocatorFree: [76, 'void* AllocatorFree(void* allocator, void* p)', 'status'],
  GetAllocatorWithDefaultOptions: [78, 'void* GetAllocatorWithDefaultOptions(_Out_ void** allocator)', 'status'],
  ReleaseEnv: [92, 'void ReleaseEnv(void* env)', 'value'],
  ReleaseStatus: [93, 'void ReleaseStatus(void* status)', 'value'],
  ReleaseMemoryInfo: [94, 'void ReleaseMemoryInfo(void* info)', 'value'],
  ReleaseSession: [95, 'void ReleaseSession(void* session)', 'value'],
  ReleaseValue: [96, 'void ReleaseValue(void* value)', 'value'],
  ReleaseTensorTypeAndShapeInfo: [99, 'void ReleaseTensorTypeAndShapeInfo(void* info)', 'value'],
  ReleaseSessionOptions: [100, 'void ReleaseSessionOptions(void* options)', 'value'],
  AddSessionConfigEntry: [130, 'void* AddSessionConfigEntry(void* options, const char* key, const char* value)', 'status'],
  RunWithBinding: [133, 'void* RunWithBinding(void* session, void* runOptions, void* binding)', 'status'],
  CreateIoBinding: [134, 'void* CreateIoBinding(void* session, _Out_ void** binding)', 'status'],
  ReleaseIoBinding: [135, 'void ReleaseIoBinding(void* binding)', 'value'],
  BindInput: [136, 'void* BindInput(void* binding, const char* name, void* value)', 'status'],
  BindOutput: [137, 'void* BindOutput(void* binding, const char* name, void* value)', 'status'],
  GetKeyValuePairs: [298, 'void GetKeyValuePairs(void* kvps, _Out_ void** keys, _Out_ void** values, _Out_ size_t* n)', 'value'],
  RegisterExecutionProviderLibrary: [301, 'void* RegisterExecutionProviderLibrary(void* env, const char* name, PATH path)', 'status'],
  UnregisterExecutionProviderLibrary: [302, 'void* UnregisterExecutionProviderLibrary(void* env, const char* name)', 'status'],
  GetEpDevices: [303, 'void* GetEpDevices(void* env, _Out_ void** devices, _Out_ size_t* n)', 'status'],
  SessionOptionsAppendExecutionProvider_V2: [304, 'void* SessionOptionsAppendExecutionProvider_V2(void* options, void* env, void** devices, size_t nDevices, const char** keys, const char** values, size_t nOptions)', 'status'],
  HardwareDevice_Type: [307, 'int HardwareDevice_Type(void* device)', 'value'],
  HardwareDevice_VendorId: [308, 'uint32_t HardwareDevice_VendorId(void* device)', 'value'],
  HardwareDevice_Vendor: [309, 'const char* HardwareDevice_Vendor(void* device)', 'value'],
  HardwareDevice_DeviceId: [310, 'uint32_t HardwareDevice_DeviceId(void* device)', 'value'],
  HardwareDevice_Metadata: [311, 'void* HardwareDevice_Metadata(void* device)', 'value'],
  EpDevice_EpName: [312, 'const char* EpDevice_EpName(void* device)', 'value'],
  EpDevice_EpVendor: [313, 'const char* EpDevice_EpVendor(void* device)', 'value'],
  EpDevice_EpMetadata: [314, 'void* EpDevice_EpMetadata(void* device)', 'value'],
  EpDevice_EpOptions: [315, 'void* EpDevice_EpOptions(void* device)', 'value'],
  EpDevice_Device: [316, 'void* EpDevice_Device(void* device)', 'value'],
} as const satisfies Record<string, readonly [number, string, 'status' | 'value']>

/** Name of a C API function the binding knows. */
export type OrtCFunction = keyof typeof FUNCTIONS

function isOrtCFunction(name: string): name is OrtCFunction {
  return Object.hasOwn(FUNCTIONS, name)
}

/** Every function the binding calls with its `OrtApi` slot (for the header check). */
export const ORT_C_SLOTS: readonly { readonly name: OrtCFunction; readonly slot: number }[] = Object.keys(FUNCTIONS)
  .filter(isOrtCFunction)
  .map((name) => ({ name, slot: FUNCTIONS[name][0] }))

/** The file name of the ONNX Runtime shared library onnxruntime-node ships for this OS. */
function bundledLibraryName(platform: NodeJS.Platform): string {
  if (platform === 'win32') return 'onnxruntime.dll'
  if (platform === 'darwin') return 'libonnxruntime.1.dylib'
  return 'libonnxruntime.so.1'
}

/**
 * Path of the ONNX Runtime library inside onnxruntime-node (`bin/napi-v6/<os>/<arch>/`). In a packaged app
 * the native files live in `app.asar.unpacked`, which a shared library must be loaded from.
 */
export function bundledOrtLibraryPath(): string {
  const require = createRequire(import.meta.url)
  const pkg = dirname(require.resolve('onnxruntime-node/package.json'))
  const path = join(pkg, 'bin', 'napi-v6', process.platform, process.arch, bundledLibraryName(process.platform))
  return path.replace(/([\\/])app\.asar([\\/])/, '$1app.asar.unpacked$2')
}

/** A native function as koffi calls it. */
type NativeFunction = (...args: unknown[]) => unknown

/** A pointer from koffi (BigInt address or null); anything else means a prototype is wrong. */
function toPtr(v: unknown, what: string): Ptr {
  if (v === null || typeof v === 'bigint') return v
  throw new TypeError(`${what}: expected a pointer, got ${typeof v}`)
}

function toPtrs(v: unknown, what: string): Ptr[] {
  if (!Array.isArray(v)) throw new TypeError(`${what}: expected an array of pointers`)
  return v.map((p: unknown) => toPtr(p, what))
}

/** One loaded ONNX Runtime library and its `OrtApi` table. */
export class OrtCLibrary {
  readonly path: string
  readonly version: string
  private readonly table: readonly Ptr[]
  private readonly functions = new Map<OrtCFunction, NativeFunction>()

  private constructor(path: string, version: string, table: readonly Ptr[]) {
    this.path = path
    this.version = version
    this.table = table
  }

  /** Loads the library at `path` (default: onnxruntime-node's) and fetches the `OrtApi` of ORT_C_API_VERSION. */
  static load(path: string = bundledOrtLibraryPath()): OrtCLibrary {
    const cached = loaded.get(path)
    if (cached) return cached
    if (!existsSync(path)) throw new Error(`ONNX Runtime library not found: ${path}`)
    let lib: LibraryHandle
    try {
      lib = koffi.load(path)
    } catch (e) {
      throw new Error(`cannot load ONNX Runtime library ${path}: ${e instanceof Error ? e.message : String(e)}`)
    }
    let getApiBase: NativeFunction
    try {
      getApiBase = lib.func('void* OrtGetApiBase()')
    } catch {
      throw new Error(`${path} is not an ONNX Runtime library (it has no OrtGetApiBase)`)
    }
    const base = toPtr(getApiBase(), 'OrtGetApiBase')
    if (base === null) throw new Error(`${path}: OrtGetApiBase returned null`)
    const [getApi, getVersion] = toPtrs(koffi.decode(base, 'void*', 2), 'OrtApiBase')
    const version: unknown = koffi.call(getVersion, protoOf('const char* OrtGetVersionString()'))
    if (typeof version !== 'string') throw new Error(`${path}: GetVersionString returned no string`)
    const api = toPtr(koffi.call(getApi, protoOf('void* OrtGetApi(uint32_t version)'), ORT_C_API_VERSION), 'GetApi')
    if (api === null) throw new Error(`ONNX Runtime ${version} at ${path} does not provide C API version ${ORT_C_API_VERSION} (too old)`)
    const highest = Math.max(...ORT_C_SLOTS.map((f) => f.slot))
    const table = toPtrs(koffi.decode(api, 'void*', highest + 1), 'OrtApi')
    const library = new OrtCLibrary(path, version, table)
    loaded.set(path, library)
    return library
  }

  private fn(name: OrtCFunction): NativeFunction {
    let f = this.functions.get(name)
    if (!f) {
      const [slot, signature] = FUNCTIONS[name]
      const ptr = this.table[slot]
      if (ptr === null || ptr === undefined) throw new Error(`ONNX Runtime ${this.version} has no ${name} (slot ${slot})`)
      const decoded: NativeFunction = koffi.decode(ptr, protoOf(signature.replace(' PATH ', PATH_TYPE)))
      f = decoded
      this.functions.set(name, f)
    }
    return f
  }

  /** Calls a function that returns `OrtStatus*`; a non-null status becomes an OrtCApiError with ORT's message. */
  check(name: OrtCFunction, ...args: unknown[]): void {
    if (FUNCTIONS[name][2] !== 'status') throw new Error(`${name} does not return an OrtStatus`)
    const status = toPtr(this.fn(name)(...args), name)
    if (status === null) return
    const code = this.number('GetErrorCode', status)
    const message = this.string('GetErrorMessage', status)
    this.call('ReleaseStatus', status)
    throw new OrtCApiError(name, code, message)
  }

  private valueOf(name: OrtCFunction, args: unknown[]): unknown {
    if (FUNCTIONS[name][2] === 'status') throw new Error(`${name} returns an OrtStatus: use check()`)
    return this.fn(name)(...args)
  }

  /** Calls a function that returns nothing (a release). */
  call(name: OrtCFunction, ...args: unknown[]): void {
    this.valueOf(name, args)
  }

  /** Calls a function that returns a pointer. */
  pointer(name: OrtCFunction, ...args: unknown[]): Ptr {
    return toPtr(this.valueOf(name, args), name)
  }

  /** Calls a function that returns a number (an enum, an id). */
  number(name: OrtCFunction, ...args: unknown[]): number {
    const v = this.valueOf(name, args)
    if (typeof v !== 'number') throw new TypeError(`${name}: expected a number, got ${typeof v}`)
    return v
  }

  /** Calls a function that returns a C string (null becomes ''). */
  string(name: OrtCFunction, ...args: unknown[]): string {
    const v = this.valueOf(name, args)
    if (v === null) return ''
    if (typeof v !== 'string') throw new TypeError(`${name}: expected a string, got ${typeof v}`)
    return v
  }
}

const loaded = new Map<string, OrtCLibrary>()

/** `ORTCHAR_T*` in koffi's syntax. */
const PATH_TYPE = process.platform === 'win32' ? ' const char16_t* ' : ' const char* '
const protos = new Map<string, TypeObject>()

/** koffi allows each prototype name once per process: declare it on first use. */
function protoOf(signature: string): TypeObject {
  let p = protos.get(signature)
  if (p === undefined) {
    p = koffi.proto(signature)
    protos.set(signature, p)
  }
  return p
}

/** Reads a NUL-terminated string at `ptr`. */
export function readCString(ptr: Ptr): string {
  if (ptr === null) return ''
  const s: unknown = koffi.decode(ptr, 'char', -1)
  if (typeof s !== 'string') throw new TypeError('readCString: not a string')
  return s
}

/** Reads `count` pointers at `ptr`. */
export function readPointers(ptr: Ptr, count: number): Ptr[] {
  if (count === 0 || ptr === null) return []
  return toPtrs(koffi.decode(ptr, 'void*', count), 'readPointers')
}

/** An ArrayBuffer over native memory (no copy): valid as long as the memory's owner is alive. */
export function nativeView(ptr: Ptr, byteLength: number): ArrayBuffer {
  if (ptr === null) throw new Error('nativeView of a null pointer')
  return koffi.view(ptr, byteLength)
}

const extraLibraries = new Map<string, LibraryHandle>()
const extraFunctions = new Map<string, NativeFunction>()

/** A function exported by a library other than ONNX Runtime itself (e.g. a provider library's counters). */
function exported(path: string, signature: string): NativeFunction {
  const key = `${path}\0${signature}`
  let f = extraFunctions.get(key)
  if (!f) {
    let lib = extraLibraries.get(path)
    if (!lib) {
      lib = koffi.load(path)
      extraLibraries.set(path, lib)
    }
    const loaded: NativeFunction = lib.func(signature)
    f = loaded
    extraFunctions.set(key, f)
  }
  return f
}

/** Calls `size_t <symbol>(uint64_t* out, size_t count)` in the library at `path` and returns the counters it wrote. */
export function readLibraryCounters(path: string, symbol: string, count: number): bigint[] {
  const out = new BigUint64Array(count)
  exported(path, `size_t ${symbol}(_Out_ uint64_t* out, size_t count)`)(out, count)
  return [...out]
}

/** Calls `size_t <symbol>(char* out, size_t size)` in the library at `path` and returns the string it wrote. */
export function readLibraryString(path: string, symbol: string, maxBytes = 4096): string {
  const out = Buffer.alloc(maxBytes)
  exported(path, `size_t ${symbol}(_Out_ uint8_t* out, size_t size)`)(out, maxBytes)
  const end = out.indexOf(0)
  return out.subarray(0, end < 0 ? maxBytes : end).toString('utf8')
}
