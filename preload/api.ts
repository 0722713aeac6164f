/**
 * @file The one contract between the renderer and the app: the `Api` the preload exposes as `window.tandem`,
 * and the same calls over HTTP in browser mode. Zero imports, so the renderer's TypeScript project can include
 * it without seeing Node or Electron. Besides types it holds `API_METHODS`, the plain table both bridges
 * (Electron IPC and HTTP) are generated from, so no method is wired by hand twice, and the few facts both sides
 * must agree on (limits, document extensions, the form of a remote model's id).
 */

/** Sampling settings a conversation carries (the engine has more knobs; these are the ones the UI shows). */
export interface SamplingSettings {
  /** 0 = greedy */
  readonly temperature: number
  readonly topP: number
  readonly maxTokens: number
}

/** A model file or folder found in one of the model folders. */
export interface ModelEntry {
  /** stable id: the absolute path */
  readonly id: string
  /** display name: file or folder name */
  readonly name: string
  readonly path: string
  readonly folder: string
  /** 'remote': a model another server runs (see `server`) */
  readonly format: 'gguf' | 'llama2c' | 'hf' | 'remote'
  readonly sizeBytes: number
  /** newest modification time of its files (ms since the epoch); with sizeBytes it tells a replaced file apart */
  readonly modifiedMs: number
  readonly architecture: string | null
  readonly quantization: string | null
  readonly parameters: number | null
  readonly contextLength: number | null
  readonly hasChatTemplate: boolean
  /** why the model cannot be used (corrupt file, unsupported type…), or null */
  readonly problem: string | null
  /**
   * how it came to the list, which says what Remove does: 'added-file' (a file the user added: forgotten),
   * 'own-folder' (in Tandem's own models folder, where downloads go: deleted from the disk), 'folder' (found in
   * another models folder: remove the folder instead)
   */
  readonly origin: ModelOrigin
  /**
   * the name of the other server that runs it (Settings → Other servers); absent for a model on this computer.
   * Its id is `remote:<server id>:<the server's model id>`; `path` is the server's URL.
   */
  readonly server?: string
}

/** The id of another server's model: `remote:<server id>:<the server's model id>` (server ids hold no colon). */
export function remoteModelId(serverId: string, model: string): string {
  return `remote:${serverId}:${model}`
}

/** The server id and model of a remote model id (remoteModelId), or null for a model on this computer. */
export function parseRemoteModelId(id: string): { readonly serverId: string; readonly model: string } | null {
  const m = /^remote:([^:]*):/.exec(id)
  return m === null ? null : { serverId: m[1], model: id.slice(m[0].length) }
}

/** See ModelEntry.origin; 'server': offered by another server (remove the server instead). */
export type ModelOrigin = 'added-file' | 'own-folder' | 'folder' | 'server'

/**
 * Where a server's key is kept: 'keychain' (sealed by the OS keychain, in the database only sealed), 'memory' (this
 * system has no keychain: kept until Tandem quits), 'missing' (it had a key that was not kept: enter it again),
 * 'none' (the server takes no key).
 */
export type RemoteKeyStorage = 'keychain' | 'memory' | 'missing' | 'none'

/** Another OpenAI-compatible server used as a backend (a vendor's NPU server, vLLM, llama.cpp's server, Ollama…). */
export interface RemoteServerView {
  readonly id: string
  readonly name: string
  /** its OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 */
  readonly url: string
  readonly key: RemoteKeyStorage
  /** the model ids it offered when last asked */
  readonly models: readonly string[]
  /** why it cannot be used now (unreachable, key refused, key missing), or null */
  readonly problem: string | null
}

/** The servers, and whether keys can be kept in the OS keychain here (else only until Tandem quits). */
export interface RemoteServers {
  readonly keychain: boolean
  readonly servers: readonly RemoteServerView[]
}

/** A server to add: it is asked for its models first, and only added when it answers. */
export interface RemoteServerInit {
  readonly name: string
  readonly url: string
  /** null: the server takes no key */
  readonly apiKey: string | null
}

/** What a catalog model is on this computer. */
export type CatalogState =
  | { readonly kind: 'available' }
  | { readonly kind: 'downloading'; readonly receivedBytes: number; readonly totalBytes: number }
  /** a download stopped part-way (paused, failed, or Tandem quit): its bytes are kept and it resumes from them */
  | { readonly kind: 'paused'; readonly receivedBytes: number; readonly totalBytes: number }
  /** `modelId` is its id in models.list */
  | { readonly kind: 'installed'; readonly modelId: string }

/** A model of the curated catalog (resources/model-catalog.json) and its state here. */
export interface CatalogModelView {
  readonly id: string
  readonly name: string
  /** the Hugging Face repository it comes from */
  readonly repo: string
  readonly format: 'gguf' | 'hf'
  readonly parameters: number
  readonly quantization: string | null
  /** the download's size */
  readonly sizeBytes: number
  /** memory it needs to run, roughly */
  readonly memoryBytes: number
  readonly license: string
  readonly state: CatalogState
  /** why its last download failed (the bytes it got are kept), or null */
  readonly error: string | null
}

/** The catalog, and this computer's memory (to warn about models that need more). */
export interface ModelCatalog {
  readonly models: readonly CatalogModelView[]
  readonly totalMemoryBytes: number
}

/** A catalog model to download; models.pauseDownload(catalogId) pauses it, downloading it again resumes. */
export interface DownloadRequest {
  readonly requestId: string
  readonly catalogId: string
}

/** Streamed while a model downloads: bytes on disk so far (what a paused download kept included) of the total. */
export interface DownloadEvent {
  readonly type: 'progress'
  readonly receivedBytes: number
  readonly totalBytes: number
}

export interface ModelFolder {
  readonly path: string
  readonly exists: boolean
  /** added by the user (removable) or built in */
  readonly builtIn: boolean
  /** why the folder could not be searched, or only partly (unreadable, too many entries), or null */
  readonly problem: string | null
}

export interface ConversationSummary {
  readonly id: string
  readonly title: string
  /** the conversation this one was branched from, while it exists */
  readonly parentId: string | null
  readonly modelId: string | null
  readonly createdAtMs: number
  readonly updatedAtMs: number
}

export interface Conversation extends ConversationSummary {
  readonly systemPrompt: string
  readonly sampling: SamplingSettings
}

export type MessageRole = 'system' | 'user' | 'assistant'
export type MessageStatus = 'complete' | 'streaming' | 'stopped' | 'error'

/** How one assistant message was produced. */
export interface MessageStats {
  readonly ttftMs: number
  readonly prefillTokensPerSec: number
  readonly decodeTokensPerSec: number
  readonly promptTokens: number
  readonly generatedTokens: number
  /** model display name */
  readonly model: string
  /** devices that ran it, e.g. ["CPU"] */
  readonly devices: readonly string[]
  /** per device: time it was busy on this reply (absent on replies stored before devices were tracked) */
  readonly deviceBusy?: readonly { readonly id: string; readonly name: string; readonly busyMs: number }[]
  /** prompt tokens not computed: taken from the live KV cache or a snapshot (absent on older replies) */
  readonly reusedTokens?: number
  /** of those, the ones a KV snapshot brought back */
  readonly restoredTokens?: number
  /**
   * the other server that wrote it (devices is then empty): its name, and whether the token counts are the
   * server's own (`usageReported`) or counted here from the streamed pieces
   */
  readonly server?: { readonly name: string; readonly usageReported: boolean }
}

export interface Message {
  readonly id: string
  readonly conversationId: string
  /** order within the conversation */
  readonly seq: number
  readonly role: MessageRole
  readonly content: string
  readonly status: MessageStatus
  readonly error: string | null
  readonly createdAtMs: number
  readonly updatedAtMs: number
  readonly stats: MessageStats | null
}

/** How a file's text was read: by its extension. */
export type DocumentTypeName = 'text' | 'markdown' | 'html' | 'pdf' | 'docx' | 'csv' | 'json' | 'code'

/** The extensions (lower case, no dot) that name each document type: what the app reads and the file picker offers. */
export const DOCUMENT_EXTENSIONS: Readonly<Record<DocumentTypeName, readonly string[]>> = {
  text: ['txt', 'text', 'log'],
  markdown: ['md', 'markdown'],
  html: ['html', 'htm', 'xhtml'],
  pdf: ['pdf'],
  docx: ['docx'],
  csv: ['csv', 'tsv'],
  json: ['json', 'jsonl', 'ndjson'],
  code: ['ts', 'tsx', 'js', 'jsx', 'mjs', 'cjs', 'py', 'rs', 'go', 'java', 'kt', 'c', 'h', 'cc', 'cpp', 'hpp', 'cs', 'rb', 'php', 'swift', 'sh', 'sql', 'css', 'scss', 'yaml', 'yml', 'toml', 'xml', 'ini', 'lua', 'r', 'scala', 'dart', 'zig']
}

/** A file summarized into a conversation; follow-up questions there are answered from its text. */
export interface DocumentInfo {
  readonly name: string
  readonly type: DocumentTypeName
  /** the file's size */
  readonly bytes: number
  /** sha256 of the file's bytes (hex): an unchanged file is recognized by it */
  readonly sha256: string
  /** characters of text read from it */
  readonly textChars: number
}

export interface ConversationDetail {
  readonly conversation: Conversation
  readonly messages: readonly Message[]
  /** the file this conversation summarizes, or null */
  readonly document: DocumentInfo | null
}

export interface SearchHit {
  readonly conversationId: string
  readonly title: string
  /** a short excerpt around the match */
  readonly snippet: string
  /** the matching message, or null when the title matched */
  readonly messageId: string | null
}

export type ThemeSetting = 'system' | 'light' | 'dark'

/**
 * How the layer matmuls placed on an NPU run: W8A8 (int8 weights per channel, int8 activations per tensor at the
 * calibrated scales; needs `tandem calibrate` once per model), with llm.npu's shadow segments repairing clipped
 * outliers on the CPU except in the least important `shadowPrunedPercent` of the layers.
 */
export interface NpuQuantizationSetting {
  readonly w8a8: boolean
  /** 0–100 */
  readonly shadowPrunedPercent: number
}

export interface Settings {
  /** folders the user added (the built-in ones are listed by models.folders) */
  readonly modelFolders: readonly string[]
  /** model files the user added one by one (models.addFile) */
  readonly modelFiles: readonly string[]
  readonly defaultModelId: string | null
  readonly theme: ThemeSetting
  /** defaults for new conversations */
  readonly sampling: SamplingSettings
  readonly npuQuantization: NpuQuantizationSetting
  /** bytes the conversations' KV snapshots may use (least recently used go first); 0 keeps none */
  readonly kvSnapshotBudgetBytes: number
}

/** The local OpenAI-compatible API as Settings shows it. */
export interface LocalApiView {
  /** on in Settings (or for this run: `tandem serve --api`) */
  readonly enabled: boolean
  readonly port: number
  /** the bearer key other tools send */
  readonly key: string
  /** http://127.0.0.1:PORT/v1 while it runs, else null */
  readonly url: string | null
  /** why it is not running although on (the port is taken, …), or null */
  readonly problem: string | null
}

/** What Settings changes of the local API. */
export interface LocalApiPatch {
  readonly enabled: boolean
  readonly port: number
}

/** The KV snapshots stored: the space they use, in how many blocks, and the budget. */
export interface KvSnapshotUsage {
  readonly bytes: number
  readonly blocks: number
  readonly budgetBytes: number
}

export interface ConversationPatch {
  readonly title?: string
  readonly systemPrompt?: string
  readonly modelId?: string | null
  readonly sampling?: SamplingSettings
}

export interface SettingsPatch {
  readonly defaultModelId?: string | null
  readonly theme?: ThemeSetting
  readonly sampling?: SamplingSettings
  readonly npuQuantization?: NpuQuantizationSetting
  readonly kvSnapshotBudgetBytes?: number
}

/** How a device is built: CPU, integrated/discrete GPU, NPU, or a software GPU (e.g. Mesa lavapipe). */
export type DeviceKindName = 'cpu' | 'igpu' | 'dgpu' | 'npu' | 'software-gpu'

/** A compute device as the settings panel lists it. */
export interface DeviceView {
  /** stable id: 'cpu', 'cpu-2', 'webgpu-0', ... */
  readonly id: string
  readonly name: string
  readonly kind: DeviceKindName
  /** ONNX Runtime execution provider */
  readonly ep: string
  /** not separate hardware: a software GPU, or a second CPU worker on the same cores */
  readonly software: boolean
  readonly status: 'ready' | 'failed' | 'unavailable' | 'unprobed'
  /** why it is not ready; null when ready */
  readonly reason: string | null
}

/** A plugin execution-provider library the user added in Settings → Devices (VitisAI, OpenVINO, QNN, ...). */
export interface ProviderLibraryView {
  /** the registration name the user gave it */
  readonly name: string
  /** the library file */
  readonly path: string
  /** options every session on its devices passes the provider (e.g. OpenVINO's device_type, VitisAI's config_file) */
  readonly options: Readonly<Record<string, string>>
  /** registered: its devices are in the device list; failed: it did not load when Tandem started */
  readonly status: 'registered' | 'failed'
  /** ONNX Runtime's reason when failed; null when registered */
  readonly reason: string | null
  /** execution providers it brought */
  readonly eps: readonly string[]
}

/** One utilization sample (the live view keeps the last 60 s of them). */
export interface UsageSample {
  readonly atMs: number
  /** per device: share of the sample interval it was busy, 0..100 */
  readonly devices: readonly { readonly id: string; readonly busyPercent: number }[]
  /** whole-system CPU use, 0..100 */
  readonly systemCpuPercent: number
  /** tokens/s of the running generation over the interval; 0 when idle */
  readonly tokensPerSecond: number
}

/** Built-in placements ('auto' = solved from measured device profiles). */
export type PresetName = 'cpu' | 'gpu' | 'npu-prefill-gpu-decode' | 'layer-split' | 'tensor-split' | 'auto'

/** Which instance(s) of an op group a placement entry means. */
export type PlacementLayerRef = number | 'all' | 'final'

/** Placement JSON (version 1), as the engine's planner reads it; validated in main before use. */
export interface PlacementJson {
  readonly version: 1
  readonly name: string
  readonly prefillChunkTokens: number
  readonly phases: { readonly prefill: PlacementPhaseJson; readonly decode: PlacementPhaseJson }
}

/** One phase of a placement: default device, per-group overrides (later wins), matmul partitions. */
export interface PlacementPhaseJson {
  readonly device: string
  readonly groups: readonly { readonly layer: PlacementLayerRef; readonly group: string; readonly device: string }[]
  readonly partitions: readonly (
    | { readonly layer: PlacementLayerRef; readonly group: string; readonly by: 'rows'; readonly devices: readonly [string, string]; readonly ratio: number }
    | { readonly layer: PlacementLayerRef; readonly group: string; readonly by: 'sequence'; readonly devices: readonly [string, string]; readonly standardLength: number }
  )[]
}

/** What the user chose: a preset, or a custom placement. */
export type PlacementSetting = { readonly preset: PresetName } | { readonly preset: 'custom'; readonly placement: PlacementJson }

/** The choice, and what it means on this machine for the default model. */
export interface PlacementView {
  readonly setting: PlacementSetting
  /** the placement that runs next (the preset resolved for these devices and the model); null without a usable model */
  readonly resolved: PlacementJson | null
  /** why it looks like it does (a preset's fallback note, Auto's one-sentence explanation); null when nothing to say */
  readonly explanation: string | null
  /** Auto's predicted speed on this machine; null for other choices or before profiling */
  readonly predicted: { readonly prefillTokensPerSec: number; readonly decodeTokensPerSec: number } | null
  /** op group names, per layer then final, for the advanced editor */
  readonly opGroups: readonly string[]
  /** matmul groups that can be partitioned */
  readonly matmulGroups: readonly string[]
  /**
   * the engine's prefill chunk: its default and the longest it takes (both capped by the model's context), and
   * the range (and default) when an NPU's static-shape graphs run part of prefill: they are compiled for the chunk
   */
  readonly prefillChunk: {
    readonly defaultTokens: number
    readonly maxTokens: number
    readonly staticShapes: { readonly minTokens: number; readonly maxTokens: number; readonly defaultTokens: number }
  }
}

/**
 * What opening a model is doing before its reply can start: 'compiling' its graph (done/total op groups),
 * 'reading' its bytes for the cache's content hash (done/total bytes), 'preparing' (ONNX Runtime loading
 * the weights; total 0: no measure). A model opened before only prepares.
 */
export interface ModelLoadProgress {
  readonly stage: 'compiling' | 'reading' | 'preparing'
  readonly done: number
  readonly total: number
}

/**
 * Streamed while a reply is generated. A reply that is a file's summary (summaries.start, or regenerating one)
 * also reports 'progress' after each step of its map-reduce: `done` of `total` model calls, `etaMs` the time left
 * at the pace so far (null before the first step ends); its deltas are the final summary only.
 */
export type ChatEvent =
  | { readonly type: 'started'; readonly userMessage: Message | null; readonly assistantMessage: Message }
  | { readonly type: 'loading'; readonly messageId: string; readonly progress: ModelLoadProgress }
  | { readonly type: 'delta'; readonly messageId: string; readonly text: string }
  | { readonly type: 'progress'; readonly messageId: string; readonly done: number; readonly total: number; readonly etaMs: number | null }

/** Every chat call names its request so it can be stopped (chat.stop) from anywhere. */
export interface SendRequest {
  readonly requestId: string
  readonly conversationId: string
  readonly content: string
}
export interface RegenerateRequest {
  readonly requestId: string
  readonly conversationId: string
}
export interface EditRequest {
  readonly requestId: string
  readonly conversationId: string
  /** the user message to replace; everything after it is dropped and the reply regenerated */
  readonly messageId: string
  readonly content: string
}

/** A file to summarize into a new conversation. */
export interface SummarizeRequest {
  /** stops it with chat.stop, like a reply */
  readonly requestId: string
  /** the file's name as picked; its extension chooses how the text is read */
  readonly fileName: string
  /** the file's bytes, base64 (at most API_LIMITS.maxDocumentBytes decoded) */
  readonly data: string
  /**
   * true: when this file (same bytes) was summarized before, answer with that conversation instead of summarizing
   * again (the result says `reused`); false: summarize anyway
   */
  readonly reuse: boolean
}

/**
 * Streamed while a file is summarized: 'created' (the conversation, with its document), then the chat events of
 * its summary message ('started', 'loading', 'progress', 'delta').
 */
export type SummaryEvent = ChatEvent | { readonly type: 'created'; readonly conversation: Conversation; readonly document: DocumentInfo }

/** How a summary request ended: the conversation holding the summary, and whether it was one stored before. */
export interface SummaryOutcome {
  readonly conversationId: string
  readonly reused: boolean
  /** the summary message (a stored one when reused) */
  readonly message: Message
}

/** What conversations.export writes: readable Markdown, or the JSON file conversations.import reads back. */
export type ExportFormat = 'markdown' | 'json'

/** What conversations.import did. */
export interface ImportResult {
  /** the conversations added, as the list shows them (in the file's order) */
  readonly imported: readonly ConversationSummary[]
  /** conversations of the file already here (same id, not deleted): left as they are, not imported again */
  readonly duplicates: readonly { readonly id: string; readonly title: string }[]
}

/** Something the user should be told that is not an error of one call (a repaired search index, a damaged database, an unwritable cache). */
export interface AppNotice {
  /**
   * 'search-index-rebuilt': repaired at start, nothing lost; 'database-damaged': some data may be unreadable;
   * 'graph-cache-temporary': compiled models go to a temporary folder because the cache cannot be written
   */
  readonly kind: 'search-index-rebuilt' | 'database-damaged' | 'graph-cache-temporary'
  readonly message: string
}

/** How errors cross the boundary (IPC or HTTP): a name the UI can switch on and a message for people. */
export interface ApiErrorShape {
  readonly name: string
  readonly message: string
}

/** Everything the renderer may ask of the app. Every call is async: it crosses a process boundary. */
export interface Api {
  app: {
    /** app version from package.json */
    version(): Promise<string>
    /** what the user should know (empty when all is well): found at start, or since (an unwritable graph cache) */
    notices(): Promise<AppNotice[]>
  }
  models: {
    list(): Promise<ModelEntry[]>
    folders(): Promise<ModelFolder[]>
    addFolder(path: string): Promise<ModelFolder[]>
    removeFolder(path: string): Promise<ModelFolder[]>
    /**
     * adds one model file by its full path once the loader has read it (refused with the loader's reason, and
     * nothing stored, when it cannot); resolves with its entry
     */
    addFile(path: string): Promise<ModelEntry>
    /**
     * takes a model off the list by its id: an added file is forgotten (the file stays), a model in Tandem's own
     * models folder is deleted from the disk (ask first); one found in another folder is refused (remove the folder)
     */
    remove(modelId: string): Promise<ModelEntry[]>
    /** the curated catalog, each model with its state here, and this computer's memory */
    catalog(): Promise<ModelCatalog>
    /**
     * downloads a catalog model into Tandem's own models folder (resuming what a paused one kept), checked against
     * the hub's size and sha256, and streams its progress; resolves with its entry in models.list. Joins the
     * download when it is already running. Rejects with StoppedError when paused, DownloadError when it failed.
     */
    download(request: DownloadRequest, onEvent: (event: DownloadEvent) => void): Promise<ModelEntry>
    /** pauses a running download (its bytes are kept); resolves with the model's state once it stopped */
    pauseDownload(catalogId: string): Promise<CatalogModelView>
    /** stops a running or paused download and deletes the bytes it kept; resolves with the model's state */
    cancelDownload(catalogId: string): Promise<CatalogModelView>
  }
  /** other OpenAI-compatible servers whose models the app can use (their models are listed by models.list) */
  servers: {
    /** every server, each asked for its models again (a server that does not answer within seconds shows why) */
    list(): Promise<RemoteServers>
    /** adds a server once it answered with its models; refused with the reason when it did not */
    add(init: RemoteServerInit): Promise<RemoteServers>
    /** replaces a server's key (null: none) */
    setKey(id: string, apiKey: string | null): Promise<RemoteServers>
    /** forgets a server and its key; conversations that used its models ask for another model */
    remove(id: string): Promise<RemoteServers>
  }
  conversations: {
    list(): Promise<ConversationSummary[]>
    create(init: ConversationPatch): Promise<Conversation>
    get(id: string): Promise<ConversationDetail>
    update(id: string, patch: ConversationPatch): Promise<Conversation>
    /** soft delete; `restore` undoes it for a while */
    remove(id: string): Promise<void>
    restore(id: string): Promise<Conversation>
    search(query: string): Promise<SearchHit[]>
    /** a new conversation copying this one up to and including the message, listed under it as a branch */
    branch(id: string, messageId: string): Promise<Conversation>
    /**
     * the conversations (null: all that are not deleted) as one text: Markdown to read, or the versioned JSON
     * file `import` takes back (with messages, stats, branch links and summarized files)
     */
    export(ids: readonly string[] | null, format: ExportFormat): Promise<string>
    /**
     * adds the conversations of an exported JSON file (at most API_LIMITS.maxImportBytes), keeping their ids, times
     * and stats; one already here is skipped and reported; a file with any error imports nothing (ValidationError)
     */
    import(json: string): Promise<ImportResult>
  }
  chat: {
    /** adds the user message and streams the reply; resolves with the final assistant message */
    send(request: SendRequest, onEvent: (event: ChatEvent) => void): Promise<Message>
    regenerate(request: RegenerateRequest, onEvent: (event: ChatEvent) => void): Promise<Message>
    edit(request: EditRequest, onEvent: (event: ChatEvent) => void): Promise<Message>
    /** stops a running request; false when it had already finished */
    stop(requestId: string): Promise<boolean>
  }
  summaries: {
    /**
     * reads the file's text, creates a conversation holding it, and streams its summary into that conversation's
     * reply (map-reduce over parts that fit the model's context); chat.stop(requestId) cancels it. Follow-up
     * questions are chat.send in that conversation.
     */
    start(request: SummarizeRequest, onEvent: (event: SummaryEvent) => void): Promise<SummaryOutcome>
  }
  devices: {
    /** every device found, ready or not (probed once per launch) */
    list(): Promise<DeviceView[]>
    /** utilization samples newer than `sinceMs` (at most the last 60 s); 4 per second while generating */
    usage(sinceMs: number): Promise<UsageSample[]>
    /** the placement choice and what it resolves to */
    placement(): Promise<PlacementView>
    /** stores a new choice (applies to the next generation) */
    setPlacement(setting: PlacementSetting): Promise<PlacementView>
    /** the provider libraries added in settings, with how their registration went at start */
    providerLibraries(): Promise<ProviderLibraryView[]>
    /**
     * loads the library now (refused with ONNX Runtime's reason when it does not load), then keeps it, with the
     * provider options its sessions get, for later starts
     */
    addProviderLibrary(name: string, path: string, options: Readonly<Record<string, string>>): Promise<ProviderLibraryView[]>
    /** forgets a library; its devices stay until Tandem restarts (sessions may be using them) */
    removeProviderLibrary(name: string): Promise<ProviderLibraryView[]>
  }
  settings: {
    get(): Promise<Settings>
    update(patch: SettingsPatch): Promise<Settings>
    /** the space the KV snapshots use (the budget applies at the next save) */
    kvSnapshots(): Promise<KvSnapshotUsage>
    /** removes every KV snapshot and gives the space back to the disk */
    clearKvSnapshots(): Promise<KvSnapshotUsage>
    /** the local OpenAI-compatible API: on or off, its port, key and address */
    localApi(): Promise<LocalApiView>
    /** turns it on or off, or moves it to another port (stored; applies at once) */
    setLocalApi(patch: LocalApiPatch): Promise<LocalApiView>
    /** a new key: tools holding the old one are refused from now on */
    regenerateApiKey(): Promise<LocalApiView>
  }
}

/**
 * The IPC channel main sends a stream method's events on, as `{ requestId, event }` (preload/index.ts
 * listens). Defined here so main and the preload cannot drift apart on the name.
 */
export const STREAM_EVENT_CHANNEL = 'stream:event'

/**
 * Every method as `service:method` → kind. 'call': request/response. 'stream': the last argument is an event
 * callback; over IPC events arrive on the `STREAM_EVENT_CHANNEL` channel tagged with the request id, over HTTP
 * as Server-Sent Events. The satisfies-clause keeps this table and `Api` in step.
 */
export const API_METHODS = {
  'app:version': 'call',
  'app:notices': 'call',
  'models:list': 'call',
  'models:folders': 'call',
  'models:addFolder': 'call',
  'models:removeFolder': 'call',
  'models:addFile': 'call',
  'models:remove': 'call',
  'models:catalog': 'call',
  'models:download': 'stream',
  'models:pauseDownload': 'call',
  'models:cancelDownload': 'call',
  'servers:list': 'call',
  'servers:add': 'call',
  'servers:setKey': 'call',
  'servers:remove': 'call',
  'conversations:list': 'call',
  'conversations:create': 'call',
  'conversations:get': 'call',
  'conversations:update': 'call',
  'conversations:remove': 'call',
  'conversations:restore': 'call',
  'conversations:search': 'call',
  'conversations:branch': 'call',
  'conversations:export': 'call',
  'conversations:import': 'call',
  'chat:send': 'stream',
  'chat:regenerate': 'stream',
  'chat:edit': 'stream',
  'chat:stop': 'call',
  'summaries:start': 'stream',
  'settings:get': 'call',
  'settings:update': 'call',
  'settings:kvSnapshots': 'call',
  'settings:clearKvSnapshots': 'call',
  'settings:localApi': 'call',
  'settings:setLocalApi': 'call',
  'settings:regenerateApiKey': 'call',
  'devices:list': 'call',
  'devices:usage': 'call',
  'devices:placement': 'call',
  'devices:setPlacement': 'call',
  'devices:providerLibraries': 'call',
  'devices:addProviderLibrary': 'call',
  'devices:removeProviderLibrary': 'call'
} as const satisfies { readonly [K in ApiChannel]: 'call' | 'stream' }

/** `service:method` names derived from Api. */
export type ApiChannel = {
  [S in keyof Api]: `${S & string}:${keyof Api[S] & string}`
}[keyof Api]

/** Limits the UI and both bridges agree on. */
export const API_LIMITS = {
  /** a file to summarize (bytes); larger files are refused before they are read */
  maxDocumentBytes: 64 * 1024 * 1024,
  /** a conversations file to import (UTF-8 bytes of its JSON); larger files are refused before they are read */
  maxImportBytes: 64 * 1024 * 1024,
  /** conversations one export call names (null asks for all of them instead) */
  maxExportIds: 10_000,
  /** a file's name (characters) */
  maxFileNameChars: 1024,
  /** one message (characters) */
  maxMessageChars: 1_000_000,
  maxTitleChars: 500,
  /** largest KV snapshot budget (bytes): 1 TiB */
  maxKvSnapshotBudgetBytes: 2 ** 40,
  maxSystemPromptChars: 100_000,
  maxSearchChars: 500,
  maxPathChars: 4096,
  /** conversation, message and request ids */
  maxIdChars: 200,
  /** user-added model folders */
  maxModelFolders: 64,
  /** model files added one by one */
  maxModelFiles: 256,
  /** provider libraries added in settings */
  maxProviderLibraries: 16,
  /** a provider library's registration name: letters, digits, '.', '_' and '-' */
  maxProviderNameChars: 64,
  /** provider options per library (vendor providers take a dozen or so) */
  maxProviderOptions: 32,
  /** a provider option's key (letters, digits, '.', '_', '-') */
  maxProviderOptionKeyChars: 64,
  /** another server's name (characters) */
  maxServerNameChars: 80,
  /** another server's URL (characters) */
  maxServerUrlChars: 2048,
  /** another server's key (characters) */
  maxApiKeyChars: 4096,
  /** other servers one can add */
  maxServers: 32,
  /** the local API's port range (below 1024 needs privileges) */
  minApiPort: 1024,
  maxApiPort: 65535,
  /** sampling.temperature range is [0, maxTemperature] */
  maxTemperature: 2,
  /** sampling.maxTokens range is [1, maxReplyTokens] */
  maxReplyTokens: 32_768,
  /** a placement JSON, serialized (characters) */
  maxPlacementChars: 1_000_000,
  /** live utilization window (ms) */
  usageWindowMs: 60_000,
  /** live utilization sample interval while generating (ms) */
  usageIntervalMs: 250
} as const
