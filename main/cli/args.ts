/** @file Command-line flags for `tandem`, parsed and validated into typed options. */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util'
import { apiKey, DEFAULT_LOCAL_API } from '../services'
import { checkRegistrationName, DEFAULT_PREFILL_CHUNK_TOKENS, DEFAULT_SHADOW_PRUNED_PERCENT, MAX_PREFILL_CHUNK_TOKENS, VIRTUAL_NPU_REGISTRATION, type ProviderOptions, type W8A8Request } from '../engine'

/** A usage problem: the CLI prints it with the help hint and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** Default and largest corpus tokens `tandem calibrate` runs (the reference forward is slow on purpose). */
export const CALIBRATE_TOKENS = { default: 2048, max: 1 << 20 } as const

/** Default and largest summary length of `tandem summarize` (tokens). */
export const SUMMARY_TOKENS = { default: 256, max: 4096 } as const

/** The OpenAI-compatible API's port unless --api-port says otherwise: the Settings default. */
export const DEFAULT_API_PORT = DEFAULT_LOCAL_API.port

export const HELP = `Usage:
  tandem generate --model PATH [--prompt TEXT] [--max-tokens N] [--temperature T] [--seed S]
                  [--top-k K] [--top-p P] [--min-p P] [--repeat-penalty R] [--stop TEXT]...
                  [--chat] [--system TEXT] [--json] [--tokenizer PATH] [--prefill-chunk N]
                  [--threads N] [--cache-dir DIR] [--stats] [--placement NAME|FILE.json]
                  [--w8a8 [--shadow-prune PERCENT]] [--virtual-npu] [--ep-library NAME=PATH]... [--ep-option NAME:KEY=VALUE]...
  tandem info --model PATH [--tokenizer PATH] [--json]
  tandem serve [--port N] [--data-dir DIR] [--models DIR]... [--no-open] [--token-delay-ms N]
               [--api [--api-port N] [--api-key KEY] [--api-host ADDR]] [--virtual-npu] [--ep-library NAME=PATH]... [--ep-option NAME:KEY=VALUE]...
  tandem calibrate --model PATH --corpus FILE [--tokens N] [--tokenizer PATH] [--cache-dir DIR] [--json]
  tandem summarize FILE... [--model PATH] [--max-tokens N] [--json] [--threads N] [--cache-dir DIR]
  tandem devices [--json] [--no-probe] [--timeout-ms N] [--virtual-npu] [--ep-library NAME=PATH]... [--ep-option NAME:KEY=VALUE]...

PATH is a GGUF file, a llama2.c .bin checkpoint, or a Hugging Face folder (config.json + safetensors).
generate prints only the generated continuation; --json prints one JSON object with text, token ids and stats.
serve runs the app in the browser: it serves the UI and its API on 127.0.0.1 only and prints the address to
open (with a per-launch token); --port 0 (the default) picks a free port, --models adds model folders for this
run, --no-open does not open the browser, --token-delay-ms waits N ms before each generated token after the
first (slows replies down for demos and end-to-end tests; default 0).
--api also serves the OpenAI-compatible API (GET /v1/models, POST /v1/chat/completions, POST /v1/completions) on
127.0.0.1:${DEFAULT_API_PORT} (--api-port; 0 picks a free port) with the key from --api-key or TANDEM_API_KEY (else a
random one, printed); --api-host listens on another address (reachable from other machines: a warning is printed).
--placement runs the model across devices: a preset (cpu, gpu, npu-prefill-gpu-decode, layer-split,
tensor-split, auto) or a placement JSON file (probes the devices first; auto also measures them, in seconds);
--json and --stats then give each device's busy time. With --virtual-npu or --ep-library (see devices) the
placement may use their NPU devices too.
--threads sets the compute threads per model (default: the CPU's physical cores as the OS reports them).
--prefill-chunk sets the prompt tokens per graph run (default ${DEFAULT_PREFILL_CHUNK_TOKENS}, at most ${MAX_PREFILL_CHUNK_TOKENS}), with or without
a placement.
calibrate prepares W8A8 for integer NPUs: it runs the model's reference forward over the first --tokens tokens
(default ${CALIBRATE_TOKENS.default}) of a plain-text corpus and stores, beside the compiled graphs and keyed by the model, each layer
matmul's activation scale, its outlier channels and hot channels, and each layer's importance (llm.npu's shadow).
The reference is exact and slow: minutes for a model of about 100M parameters.
--w8a8 (with --placement) then runs the layer matmuls the placement puts on an NPU as an integer NPU does, int8
weights per channel and int8 activations per tensor at the calibrated scales, and repairs what clipping cuts off with
shadow segments on the CPU; --shadow-prune skips the shadow in that share of the least important layers (default
${DEFAULT_SHADOW_PRUNED_PERCENT}, as llm.npu; 100 = no shadow).
summarize reads each FILE (.txt, .md, .html, .pdf, .docx, .csv, .json or source code), cuts text longer than the
model's context into parts, summarizes each and combines them, and prints the summary on stdout (progress on
stderr); --model defaults to the first model in the app's models folder, --max-tokens caps the summary (default
${SUMMARY_TOKENS.default}); --json prints one object per file: summary, parts (map steps), file (name, type, bytes, sha256), stats.
devices lists the compute devices (CPU, GPU, NPU) with their status; each is probed with tiny graphs in a child
process unless --no-probe; --json prints one JSON array. --ep-library registers a plugin execution-provider
library (VitisAI, OpenVINO, QNN, ...) for this run and lists its devices; --virtual-npu builds (once, with the
system's C++ compiler) and registers Tandem's virtual NPU test provider, which runs on the CPU. --ep-option gives
the provider of library NAME an option for every session on its devices (e.g. openvino:device_type=NPU, or
${VIRTUAL_NPU_REGISTRATION}:gops=4000 for the virtual NPU's throughput model).`

/** Longest --token-delay-ms: a second per token is already far slower than anyone reads. */
export const MAX_TOKEN_DELAY_MS = 1000

export interface GenerateArgs {
  readonly command: 'generate'
  readonly model: string
  readonly tokenizer?: string
  readonly prompt: string
  readonly maxTokens: number
  readonly temperature: number
  readonly seed: number
  readonly topK: number
  readonly topP: number
  readonly minP: number
  readonly repetitionPenalty: number
  readonly stop: readonly string[]
  readonly chat: boolean
  readonly system?: string
  readonly json: boolean
  readonly stats: boolean
  /** prompt tokens per forward; undefined = 128, or with --placement the placement's own chunk */
  readonly prefillChunk?: number
  readonly threads?: number
  readonly cacheDir?: string
  /** a preset name or a placement JSON file; undefined = the single-device CPU path */
  readonly placement?: string
  /** --w8a8 [--shadow-prune N] */
  readonly w8a8?: W8A8Request
  /** provider libraries whose devices a placement may use */
  readonly providers: ProviderArgs
}

/** --virtual-npu and --ep-library NAME=PATH (devices, generate). */
export interface ProviderArgs {
  /** build and register the virtual NPU test provider */
  readonly virtualNpu: boolean
  /** plugin EP libraries to register for this run */
  readonly epLibraries: readonly { readonly name: string; readonly path: string }[]
  /** provider options by library registration name (--ep-option NAME:KEY=VALUE) */
  readonly epOptions: Readonly<Record<string, Readonly<Record<string, string>>>>
}

export interface InfoArgs {
  readonly command: 'info'
  readonly model: string
  readonly tokenizer?: string
  readonly json: boolean
}

export interface ServeArgs {
  readonly command: 'serve'
  /** 0 = a free port */
  readonly port: number
  readonly dataDir?: string
  /** extra model folders for this run */
  readonly models: readonly string[]
  /** open the page in the system browser */
  readonly open: boolean
  /** ms to wait before each generated token after the first; 0 = none */
  readonly tokenDelayMs: number
  /** provider libraries whose devices the app may use */
  readonly providers: ProviderArgs
  /** the OpenAI-compatible API, when --api is given */
  readonly api: { readonly port: number; readonly key: string | undefined; readonly address: string } | null
}

export interface DevicesArgs {
  readonly command: 'devices'
  readonly json: boolean
  /** run the probe graphs (default true) */
  readonly probe: boolean
  /** per-EP probe timeout (default: the engine's) */
  readonly timeoutMs?: number
  readonly providers: ProviderArgs
}

export interface CalibrateArgs {
  readonly command: 'calibrate'
  readonly model: string
  readonly tokenizer?: string
  readonly corpus: string
  /** most corpus tokens used */
  readonly tokens: number
  readonly cacheDir?: string
  readonly json: boolean
}

export interface SummarizeArgs {
  readonly command: 'summarize'
  readonly files: readonly string[]
  /** undefined: the first model in the app's models folder */
  readonly model?: string
  readonly maxTokens: number
  readonly json: boolean
  readonly threads?: number
  readonly cacheDir?: string
}

export type CliArgs = GenerateArgs | InfoArgs | ServeArgs | DevicesArgs | CalibrateArgs | SummarizeArgs | { readonly command: 'help' }

/** Parses `tandem summarize FILE... [flags]`. */
function parseSummarize(rest: readonly string[]): SummarizeArgs {
  let parsed
  try {
    parsed = parseArgs({ args: [...rest], strict: true, allowPositionals: true, options: { model: { type: 'string', short: 'm' }, 'max-tokens': { type: 'string', short: 'n' }, json: { type: 'boolean' }, threads: { type: 'string' }, 'cache-dir': { type: 'string' } } })
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e))
  }
  const v = parsed.values
  if (parsed.positionals.length === 0) throw new UsageError('summarize needs at least one FILE')
  return {
    command: 'summarize',
    files: parsed.positionals,
    model: v.model,
    maxTokens: num(v['max-tokens'], 'max-tokens', SUMMARY_TOKENS.default, (n) => isInt(n) && n >= 16 && n <= SUMMARY_TOKENS.max, `an integer from 16 to ${SUMMARY_TOKENS.max}`),
    json: v.json ?? false,
    threads: threadsFlag(v.threads),
    cacheDir: v['cache-dir']
  }
}

/** Parses the flags of `tandem calibrate`. */
function parseCalibrate(rest: readonly string[]): CalibrateArgs {
  const v = parseFlags(rest, { model: { type: 'string' }, tokenizer: { type: 'string' }, corpus: { type: 'string' }, tokens: { type: 'string' }, 'cache-dir': { type: 'string' }, json: { type: 'boolean' } })
  if (!v.model) throw new UsageError('--model PATH is required')
  if (!v.corpus) throw new UsageError('--corpus FILE is required')
  return {
    command: 'calibrate',
    model: v.model,
    tokenizer: v.tokenizer,
    corpus: v.corpus,
    tokens: num(v.tokens, 'tokens', CALIBRATE_TOKENS.default, (n) => isInt(n) && n >= 1 && n <= CALIBRATE_TOKENS.max, `an integer from 1 to ${CALIBRATE_TOKENS.max}`),
    cacheDir: v['cache-dir'],
    json: v.json ?? false
  }
}

function num(value: string | undefined, flag: string, fallback: number, check: (n: number) => boolean, rule: string): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (value.trim() === '' || !Number.isFinite(n) || !check(n)) throw new UsageError(`--${flag} must be ${rule} (got "${value}")`)
  return n
}

const isInt = (n: number): boolean => Number.isInteger(n)

/** --threads: undefined (the engine's default) or an integer from 1 to 256. */
function threadsFlag(value: string | undefined): number | undefined {
  return value === undefined ? undefined : num(value, 'threads', 0, (n) => isInt(n) && n >= 1 && n <= 256, 'an integer from 1 to 256')
}

/** Node's strict flag parser (no positionals) with its errors turned into UsageErrors. */
function parseFlags<T extends ParseArgsOptionsConfig>(rest: readonly string[], options: T) {
  try {
    return parseArgs({ args: [...rest], strict: true, allowPositionals: false, options }).values
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e))
  }
}

/** Parses argv (without node and script) into a command. */
export function parseCli(argv: readonly string[]): CliArgs {
  const [command, ...rest] = argv
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return { command: 'help' }
  if (command === 'serve') return parseServe(rest)
  if (command === 'devices') return parseDevices(rest)
  if (command === 'calibrate') return parseCalibrate(rest)
  if (command === 'summarize') return parseSummarize(rest)
  if (command !== 'generate' && command !== 'info') throw new UsageError(`unknown command "${command}"`)
  const v = parseFlags(rest, {
    model: { type: 'string', short: 'm' },
    tokenizer: { type: 'string' },
    prompt: { type: 'string', short: 'p' },
    'max-tokens': { type: 'string', short: 'n' },
    temperature: { type: 'string', short: 't' },
    seed: { type: 'string', short: 's' },
    'top-k': { type: 'string' },
    'top-p': { type: 'string' },
    'min-p': { type: 'string' },
    'repeat-penalty': { type: 'string' },
    stop: { type: 'string', multiple: true },
    chat: { type: 'boolean' },
    system: { type: 'string' },
    json: { type: 'boolean' },
    stats: { type: 'boolean' },
    'prefill-chunk': { type: 'string' },
    threads: { type: 'string' },
    'cache-dir': { type: 'string' },
    placement: { type: 'string' },
    w8a8: { type: 'boolean' },
    'shadow-prune': { type: 'string' },
    ...PROVIDER_FLAGS
  })
  if (!v.model) throw new UsageError('--model PATH is required')
  if (command === 'info') return { command, model: v.model, tokenizer: v.tokenizer, json: v.json ?? false }
  const threads = threadsFlag(v.threads)
  if (v['shadow-prune'] !== undefined && v.w8a8 !== true) throw new UsageError('--shadow-prune needs --w8a8')
  if (v.w8a8 === true && v.placement === undefined) throw new UsageError('--w8a8 needs --placement (e.g. npu-prefill-gpu-decode)')
  const w8a8 = v.w8a8 === true ? { shadowPrunedPercent: num(v['shadow-prune'], 'shadow-prune', DEFAULT_SHADOW_PRUNED_PERCENT, (n) => n >= 0 && n <= 100, 'a number from 0 to 100') } : undefined
  return {
    command,
    model: v.model,
    tokenizer: v.tokenizer,
    prompt: v.prompt ?? '',
    maxTokens: num(v['max-tokens'], 'max-tokens', 256, (n) => isInt(n) && n >= 1 && n <= 1_000_000, 'an integer ≥ 1'),
    temperature: num(v.temperature, 'temperature', 0.8, (n) => n >= 0 && n <= 10, 'a number from 0 to 10'),
    seed: num(v.seed, 'seed', 0, (n) => isInt(n) && Math.abs(n) <= 2 ** 31, 'an integer'),
    topK: num(v['top-k'], 'top-k', 40, (n) => isInt(n) && n >= 0, 'an integer ≥ 0 (0 = off)'),
    topP: num(v['top-p'], 'top-p', 0.95, (n) => n > 0 && n <= 1, 'in (0, 1]'),
    minP: num(v['min-p'], 'min-p', 0.05, (n) => n >= 0 && n < 1, 'in [0, 1)'),
    repetitionPenalty: num(v['repeat-penalty'], 'repeat-penalty', 1, (n) => n > 0 && n <= 10, 'in (0, 10]'),
    stop: v.stop ?? [],
    chat: v.chat ?? false,
    system: v.system,
    json: v.json ?? false,
    stats: v.stats ?? false,
    prefillChunk: v['prefill-chunk'] === undefined ? undefined : num(v['prefill-chunk'], 'prefill-chunk', 0, (n) => isInt(n) && n >= 1 && n <= MAX_PREFILL_CHUNK_TOKENS, `an integer from 1 to ${MAX_PREFILL_CHUNK_TOKENS}`),
    threads,
    cacheDir: v['cache-dir'],
    placement: v.placement,
    w8a8,
    providers: providerArgs(v)
  }
}

/** Parses the flags of `tandem serve`. */
function parseServe(rest: readonly string[]): ServeArgs {
  const v = parseFlags(rest, {
    port: { type: 'string' },
    'data-dir': { type: 'string' },
    models: { type: 'string', multiple: true },
    'no-open': { type: 'boolean' },
    'token-delay-ms': { type: 'string' },
    api: { type: 'boolean' },
    'api-port': { type: 'string' },
    'api-key': { type: 'string' },
    'api-host': { type: 'string' },
    ...PROVIDER_FLAGS
  })
  if (v.api !== true && (v['api-port'] ?? v['api-key'] ?? v['api-host']) !== undefined) throw new UsageError('--api-port, --api-key and --api-host need --api')
  const given = v['api-key'] ?? process.env.TANDEM_API_KEY
  let key: string | undefined
  try {
    key = given === undefined ? undefined : apiKey(given, 'the API key')
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e))
  }
  return {
    command: 'serve',
    api:
      v.api === true
        ? {
            port: num(v['api-port'], 'api-port', DEFAULT_API_PORT, (n) => isInt(n) && n >= 0 && n <= 65535, 'an integer from 0 to 65535'),
            key,
            address: v['api-host'] ?? '127.0.0.1'
          }
        : null,
    port: num(v.port, 'port', 0, (n) => isInt(n) && n >= 0 && n <= 65535, 'an integer from 0 to 65535'),
    dataDir: v['data-dir'],
    models: v.models ?? [],
    open: !(v['no-open'] ?? false),
    tokenDelayMs: num(v['token-delay-ms'], 'token-delay-ms', 0, (n) => isInt(n) && n >= 0 && n <= MAX_TOKEN_DELAY_MS, `an integer from 0 to ${MAX_TOKEN_DELAY_MS}`),
    providers: providerArgs(v)
  }
}

/** Parses the flags of `tandem devices`. */
function parseDevices(rest: readonly string[]): DevicesArgs {
  const v = parseFlags(rest, {
    json: { type: 'boolean' },
    'no-probe': { type: 'boolean' },
    'timeout-ms': { type: 'string' },
    ...PROVIDER_FLAGS
  })
  const timeoutMs = v['timeout-ms'] === undefined ? undefined : num(v['timeout-ms'], 'timeout-ms', 0, (n) => isInt(n) && n >= 1 && n <= 600_000, 'an integer from 1 to 600000')
  return { command: 'devices', json: v.json ?? false, probe: !(v['no-probe'] ?? false), timeoutMs, providers: providerArgs(v) }
}

/** The provider-library flags, shared by the commands that take them. */
const PROVIDER_FLAGS = {
  'virtual-npu': { type: 'boolean' },
  'ep-library': { type: 'string', multiple: true },
  'ep-option': { type: 'string', multiple: true }
} as const

function providerArgs(v: { readonly 'virtual-npu'?: boolean; readonly 'ep-library'?: readonly string[]; readonly 'ep-option'?: readonly string[] }): ProviderArgs {
  const epLibraries = (v['ep-library'] ?? []).map(parseEpLibrary)
  const epOptions: Record<string, Record<string, string>> = {}
  for (const text of v['ep-option'] ?? []) {
    const { name, key, value } = parseEpOption(text)
    if (name !== VIRTUAL_NPU_REGISTRATION && !epLibraries.some((l) => l.name === name)) {
      throw new UsageError(`--ep-option ${text}: no --ep-library named ${name}${v['virtual-npu'] ? ` (the virtual NPU's name is ${VIRTUAL_NPU_REGISTRATION})` : ''}`)
    }
    epOptions[name] = { ...epOptions[name], [key]: value }
  }
  return { virtualNpu: v['virtual-npu'] ?? false, epLibraries, epOptions }
}

/** The engine's form of the provider flags. */
export function providerOptions(p: ProviderArgs): ProviderOptions {
  return {
    virtualNpu: p.virtualNpu,
    virtualNpuOptions: p.epOptions[VIRTUAL_NPU_REGISTRATION],
    providerLibraries: p.epLibraries.map((l) => ({ ...l, options: p.epOptions[l.name] }))
  }
}

/** "NAME:KEY=VALUE" of --ep-option. */
function parseEpOption(text: string): { name: string; key: string; value: string } {
  const m = /^([^:=]+):([^=]+)=(.*)$/.exec(text)
  if (!m) throw new UsageError(`--ep-option must be NAME:KEY=VALUE (got "${text}")`)
  const [, name, key, value] = m
  if (key.length > MAX_PROVIDER_OPTION_CHARS || value.length > MAX_PROVIDER_OPTION_CHARS) throw new UsageError(`--ep-option ${name}:${key.slice(0, 40)}: keys and values are at most ${MAX_PROVIDER_OPTION_CHARS} characters`)
  return { name, key, value }
}

/** Longest provider option key or value (vendor options hold paths at most). */
const MAX_PROVIDER_OPTION_CHARS = 4096

/** "NAME=PATH" of --ep-library. */
function parseEpLibrary(text: string): { name: string; path: string } {
  const eq = text.indexOf('=')
  const name = eq < 0 ? '' : text.slice(0, eq)
  const path = eq < 0 ? '' : text.slice(eq + 1)
  if (name === '' || path === '') throw new UsageError(`--ep-library must be NAME=PATH (got "${text}")`)
  try {
    checkRegistrationName(name)
  } catch (e) {
    throw new UsageError(`--ep-library: ${e instanceof Error ? e.message : String(e)}`)
  }
  return { name, path }
}
