/**
 * @file Chat: store the user's message, stream the model's reply into an assistant message, finish it as
 * complete / stopped / error with stats. Generations run one at a time in arrival order (one model, one
 * worker); each request has an id and an AbortController, so `stop(requestId)` works while it is queued
 * or streaming. The user's text is stored before anything can fail, so an error never loses it. Removing a
 * conversation stops its reply. A full disk ends a reply like a stop (the text so far kept, the reason
 * stored with it) and the caller gets DiskFullError; see reply-finisher.ts for the write that finishes it.
 */
import { createHash, randomInt } from 'node:crypto'
import type { ChatMessage, GenerationStats, TextModel } from '../engine'
import {
  API_LIMITS,
  type AppNotice,
  type ChatEvent,
  type EditRequest,
  type Message,
  type RegenerateRequest,
  type SendRequest,
  type SummarizeRequest,
  type SummaryEvent,
  type SummaryOutcome
} from '../../preload/api'
import type { MessagePatch, Store, Message as StoredMessage } from '../store'
import { messageContent } from './api-validate'
import type { DevicesService } from './devices-service'
import { ApiError, errorMessage, invalid, isDiskFull, toApiError } from './errors'
import { toApiMessage, toDocumentInfo, type ConversationsService } from './conversations-service'
import { DocumentPassages, excerptBudget } from './documents/follow-up'
import { extractDocument } from './documents/extract'
import { combineStats, summarize, textSummaryModel, type SummaryModel } from './documents/summarize'
import { parseRemoteModelId, type ModelEntry } from '../../preload/api'
import { ModelSlot } from './model-slot'
import { ReplyFinisher } from './reply-finisher'
import type { ModelsService } from './models-service'
import { buildPrompt } from './prompt'
import type { UsageReading } from './usage-sampler'
import type { KvSnapshots } from './kv-snapshots'
import { type RemoteServersService, type RemoteTarget } from './remote'
import { ASSUMED_REMOTE_CONTEXT, estimateTokens, remoteHistory, remoteStats, remoteSummaryModel, runRemote, type RemoteRun } from './remote/remote-generation'

/** Least time between two writes of a streaming reply's content (~10 writes/s). */
export const PERSIST_INTERVAL_MS = 100

/** Characters (graphemes) of the first message used as an untitled conversation's title. */
const AUTO_TITLE_CHARS = 60

/** What ChatService needs. */
export interface ChatServiceDeps {
  readonly store: Pick<Store, 'db' | 'messages' | 'conversations' | 'documents'>
  readonly conversations: ConversationsService
  readonly models: ModelsService
  /** the placement each model is opened with, and device names for stats */
  readonly devices: DevicesService
  readonly graphCacheDir: string
  readonly threads?: number
  /** called when a generation starts (the usage sampler switches to its fast rate) */
  readonly onGenerationStart?: () => void
  /** monotonic clock (ms) of the write throttle (default performance.now); tests drive it to check the throttle */
  readonly monotonicMs?: () => number
  /**
   * Awaited before each generated token after the first, with the request's abort signal (default: none).
   * `tandem serve --token-delay-ms` passes tokenDelay() so end-to-end tests can watch and stop a reply
   * mid-stream on any machine; tests of this service pass a gate they open token by token.
   */
  readonly pace?: (signal: AbortSignal) => Promise<void>
  /** KV-cache snapshots: restored before a prompt runs, saved after each reply (absent: none) */
  readonly kvSnapshots?: KvSnapshots
  /** other servers: where a request for one of their models goes (absent: their models cannot be used) */
  readonly servers?: Pick<RemoteServersService, 'target'>
}

/**
 * One request of the local OpenAI-compatible API: a conversation (`messages`, the chat template's turns) or a plain
 * `prompt`; nothing is stored. It runs on the chat's model slot, placement and queue, like a reply.
 */
export interface CompletionJob {
  /** a model entry id; null: the default model */
  readonly modelId: string | null
  readonly input: { readonly messages: readonly ChatMessage[] } | { readonly prompt: string }
  readonly maxTokens: number
  readonly temperature: number
  readonly topP: number
  /** null: a fresh seed */
  readonly seed: number | null
  readonly stopStrings: readonly string[]
}

/** How a completion ended. */
export interface CompletionOutcome {
  readonly text: string
  /** 'length': the token budget or the context ran out */
  readonly finishReason: 'stop' | 'length'
  readonly promptTokens: number
  readonly completionTokens: number
}

/** What the passages of a follow-up are measured with: the model's context and tokens, and whether it lacks a chat template. */
interface PassageCounter {
  readonly contextLength: number
  countTokens(text: string): number
  readonly plain: boolean
}

/** What writes a reply: given its message, the abort signal and a sink for its text so far, the finishing write. */
type Producer = (assistant: StoredMessage, signal: AbortSignal, onText: (text: string) => void) => Promise<MessagePatch>

/** A request between acceptance and its final message. */
interface Active {
  readonly conversationId: string
  readonly controller: AbortController
}

/** Sends, regenerates, edits and stops chat replies. */
export class ChatService {
  private readonly slot: ModelSlot
  private readonly active = new Map<string, Active>()
  private queue: Promise<unknown> = Promise.resolve()
  /** generations running on other servers (dispose waits for them) */
  private readonly remoteRuns = new Set<Promise<unknown>>()
  private disposed = false
  /** tokens streamed by all generations (the usage sampler's tokens/s) */
  private tokensStreamed = 0
  private generating = false
  /** the KV snapshot save after the last reply (app shutdown waits for it: a save is never cut off by quitting) */
  private saving: Promise<void> = Promise.resolve()
  private readonly monotonicMs: () => number
  private readonly finisher: ReplyFinisher
  private readonly unsubscribeRemoved: () => void
  private readonly passages = new DocumentPassages()
  /** generations queued or running (the local API refuses more than its bound) */
  private pending = 0

  constructor(private readonly deps: ChatServiceDeps) {
    this.slot = new ModelSlot({ cacheDir: deps.graphCacheDir, threads: deps.threads })
    this.monotonicMs = deps.monotonicMs ?? (() => performance.now())
    this.finisher = new ReplyFinisher(deps.store.messages)
    this.unsubscribeRemoved = deps.conversations.onRemoved((id) => this.stopConversation(id))
  }

  /** Adds the user message and streams the reply; resolves with the final assistant message. */
  send(request: SendRequest, emit: (event: ChatEvent) => void, signal?: AbortSignal): Promise<Message> {
    const content = messageContent(request.content, 'content')
    return this.start(request.requestId, request.conversationId, emit, signal, this.chatReply(request.conversationId, emit), () => {
      const { conversations, messages } = this.deps.store
      const user = messages.append({ conversationId: request.conversationId, role: 'user', content })
      const conversation = conversations.get(request.conversationId)
      if (conversation !== undefined && conversation.title === '') conversations.rename(conversation.id, autoTitle(content))
      return user
    })
  }

  /** Drops the last assistant reply (and anything after the last user message) and answers again. */
  regenerate(request: RegenerateRequest, emit: (event: ChatEvent) => void, signal?: AbortSignal): Promise<Message> {
    return this.start(request.requestId, request.conversationId, emit, signal, this.regenerated(request.conversationId, emit), () => {
      const all = this.deps.store.messages.list(request.conversationId)
      const lastUser = all.findLast((m) => m.role === 'user')
      if (lastUser === undefined) throw invalid('There is no message to answer yet: send one first.')
      this.deps.store.messages.deleteAfter(request.conversationId, lastUser.seq)
      return null
    })
  }

  /** Replaces a user message's text, drops everything after it, and answers it. */
  edit(request: EditRequest, emit: (event: ChatEvent) => void, signal?: AbortSignal): Promise<Message> {
    const content = messageContent(request.content, 'content')
    return this.start(request.requestId, request.conversationId, emit, signal, this.chatReply(request.conversationId, emit), () => {
      const { messages } = this.deps.store
      const target = messages.get(request.messageId)
      if (target === undefined || target.conversationId !== request.conversationId) {
        throw new ApiError('NotFoundError', `Message ${request.messageId} not found in this conversation.`)
      }
      if (target.role !== 'user') throw invalid('Only your own messages can be edited.')
      messages.deleteAfter(request.conversationId, target.seq)
      return messages.update(target.id, { content, status: 'complete', error: null })
    })
  }

  /**
   * Reads a file's text into a new conversation and writes its summary as the reply (map-reduce, summarize.ts).
   * With `reuse`, a file summarized before (the same bytes) answers with that conversation instead. The file is
   * read under the request id, so chat.stop cancels a long PDF as well as the summary.
   */
  async summarize(request: SummarizeRequest, unsafeEmit: (event: SummaryEvent) => void, signal?: AbortSignal): Promise<SummaryOutcome> {
    const emit = safely(unsafeEmit)
    const file = await this.readUpload(request, signal)
    const { store } = this.deps
    if (request.reuse) {
      const stored = store.documents.findSummary(file.sha256)
      const message = stored === undefined ? undefined : store.messages.get(stored.messageId)
      if (stored !== undefined && message !== undefined) return { conversationId: stored.conversationId, reused: true, message: toApiMessage(message) }
    }
    const created = store.db.transaction(() => {
      const conversation = this.deps.conversations.create({ title: request.fileName.slice(0, API_LIMITS.maxTitleChars) })
      const document = store.documents.attach(conversation.id, { name: request.fileName, type: file.type, bytes: file.bytes, sha256: file.sha256, text: file.text })
      const user = store.messages.append({ conversationId: conversation.id, role: 'user', content: `Summarize ${request.fileName}` })
      return { id: conversation.id, document, user }
    })()
    emit({ type: 'created', conversation: this.deps.conversations.require(created.id), document: toDocumentInfo(created.document) })
    const message = await this.start(request.requestId, created.id, emit, signal, this.summaryReply(created.id, file.text, emit), () => created.user)
    return { conversationId: created.id, reused: false, message }
  }

  /** Generations queued or running: replies, summaries and API completions. */
  get pendingGenerations(): number {
    return this.pending
  }

  /** Runs one completion of the local API in the generation queue; `onText` gets each piece; `signal` stops it (the client left). */
  complete(job: CompletionJob, onText: (text: string) => void, signal: AbortSignal): Promise<CompletionOutcome> {
    if (this.disposed) throw new ApiError('ShutdownError', 'Tandem is shutting down.')
    return this.enqueue(() => this.completion(job, onText, signal), this.laneOf(job.modelId))
  }

  /** Stops a queued or running request; false when it is unknown or already finished. */
  stop(requestId: string): boolean {
    const a = this.active.get(requestId)
    if (a === undefined || a.controller.signal.aborted) return false
    a.controller.abort()
    return true
  }

  /** Stops the queued or running request of a conversation (it was removed); false when it has none. */
  stopConversation(conversationId: string): boolean {
    let stopped = false
    for (const [requestId, a] of this.active) if (a.conversationId === conversationId) stopped = this.stop(requestId) || stopped
    return stopped
  }

  /** Ids of replies whose finishing write is waiting for disk space (still 'streaming' in the database). */
  get unfinishedReplyIds(): string[] {
    return this.finisher.waitingIds
  }

  /** What the user should be told about chatting: that compiled models go to a temporary folder (the graph cache cannot be written). */
  notices(): AppNotice[] {
    const message = this.slot.cacheNotice
    return message === null ? [] : [{ kind: 'graph-cache-temporary', message }]
  }

  /** What the usage sampler reads: the open model worker's busy counters, tokens streamed, and whether one is running. */
  usageReading(): UsageReading {
    const model = this.slot.openModel
    return { worker: model === null ? null : { owner: model, usage: model.worker.usage() }, tokens: this.tokensStreamed, generating: this.generating }
  }

  /** Stops everything, waits for the queue to drain, and closes the model. */
  /** Resolves once the KV snapshot save after the last reply has finished (or stopped for the next message). */
  snapshotSaved(): Promise<void> {
    return this.saving
  }

  async dispose(): Promise<void> {
    this.disposed = true
    this.unsubscribeRemoved()
    for (const a of this.active.values()) a.controller.abort()
    await Promise.all([this.queue, ...[...this.remoteRuns].map((r) => r.catch(() => undefined))])
    await this.saving
    this.finisher.dispose()
    await this.slot.dispose()
  }

  /** The text of an uploaded file, its type, size and sha256; chat.stop(requestId) or the caller leaving stops the read. */
  private async readUpload(request: SummarizeRequest, signal: AbortSignal | undefined): Promise<{ type: string; text: string; bytes: number; sha256: string }> {
    if (this.disposed) throw new ApiError('ShutdownError', 'Tandem is shutting down.')
    if (this.active.has(request.requestId)) throw invalid(`Request id ${request.requestId} is already in use.`)
    const reading = new AbortController()
    // no conversation yet: '' matches none in the busy check
    this.active.set(request.requestId, { conversationId: '', controller: reading })
    const onCallerGone = (): void => reading.abort()
    signal?.addEventListener('abort', onCallerGone, { once: true })
    if (signal?.aborted) reading.abort()
    try {
      const bytes = Buffer.from(request.data, 'base64')
      const { type, text } = await extractDocument(request.fileName, bytes, reading.signal)
      reading.signal.throwIfAborted()
      return { type, text, bytes: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') }
    } catch (err) {
      if (reading.signal.aborted) throw new ApiError('StoppedError', `Stopped before ${request.fileName} was read.`, { cause: err })
      throw err
    } finally {
      this.active.delete(request.requestId)
      signal?.removeEventListener('abort', onCallerGone)
    }
  }

  /**
   * The messages a reply answers: those before it that count. In a conversation about a file, the question being
   * answered carries the file's passages that share the most words with it (documents/follow-up.ts).
   */
  private promptHistory(conversationId: string, beforeSeq: number, model: PassageCounter, replyTokens: number): ChatMessage[] {
    const history: ChatMessage[] = this.deps.store.messages
      .list(conversationId)
      .filter((m) => m.seq < beforeSeq && m.status !== 'error' && m.role !== 'system' && m.content !== '')
      .map((m) => ({ role: m.role, content: m.content }))
    const document = this.deps.store.documents.get(conversationId)
    const last = history.at(-1)
    // the first question is the summary request itself: its reply is the summary, not an answer from passages
    if (document === undefined || last === undefined || last.role !== 'user' || !history.some((m) => m.role === 'assistant')) return history
    const text = this.deps.store.documents.text(conversationId) ?? ''
    const question = this.passages.question(
      model,
      { key: `${conversationId}:${document.sha256}`, name: document.name, text },
      last.content,
      excerptBudget(model.contextLength, replyTokens),
      model.plain
    )
    return [...history.slice(0, -1), { role: 'user', content: question }]
  }

  /**
   * Where a streaming reply's pieces go: each is added to its text, which the caller's `onText` sees, sent as a
   * 'delta' event and written (throttled); returns the text so far.
   */
  private replyText(messageId: string, emit: (event: ChatEvent) => void, onText: (text: string) => void): (piece: string) => string {
    let content = ''
    const persist = this.throttledWrite(messageId)
    return (piece) => {
      content += piece
      onText(content)
      emit({ type: 'delta', messageId, text: piece })
      persist(content)
      return content
    }
  }

  /** Writes a streaming reply's text at most every PERSIST_INTERVAL_MS, so a crash keeps most of it without a write per token. */
  private throttledWrite(messageId: string): (content: string) => void {
    let writtenAtMs = this.monotonicMs()
    return (content) => {
      if (this.monotonicMs() - writtenAtMs < PERSIST_INTERVAL_MS) return
      this.deps.store.messages.setContent(messageId, content)
      writtenAtMs = this.monotonicMs()
    }
  }

  /** What regenerating writes: the summary again when the reply is a file's summary (its conversation's first), else a chat reply. */
  private regenerated(conversationId: string, emit: (event: ChatEvent) => void): Producer {
    const { documents, messages } = this.deps.store
    const users = messages.list(conversationId).filter((m) => m.role === 'user')
    const text = users.length === 1 ? documents.text(conversationId) : undefined
    return text === undefined ? this.chatReply(conversationId, emit) : this.summaryReply(conversationId, text, safely(emit))
  }

  /**
   * Runs `job` after every generation queued before it on this computer's model, or at once for another server's
   * model (the server has its own queue; waiting behind a local summary would serve nobody); `pending` counts it
   * until it ends.
   */
  private enqueue<T>(job: () => Promise<T>, lane: 'local' | 'remote'): Promise<T> {
    this.pending++
    if (lane === 'remote') {
      const run = job().finally(() => {
        this.pending--
        this.remoteRuns.delete(run)
      })
      this.remoteRuns.add(run)
      return run
    }
    const run = this.queue.then(job).finally(() => this.pending--)
    this.queue = run.catch(() => undefined)
    return run
  }

  /** Where a request for `modelId` (null: the default model) runs. */
  private laneOf(modelId: string | null): 'local' | 'remote' {
    const wanted = this.deps.models.wanted(modelId)
    return wanted !== null && parseRemoteModelId(wanted) !== null ? 'remote' : 'local'
  }

  /** One API completion on the open model (see complete). */
  private async completion(job: CompletionJob, onText: (text: string) => void, signal: AbortSignal): Promise<CompletionOutcome> {
    signal.throwIfAborted()
    const entry = await this.deps.models.pick(job.modelId)
    if (entry.format === 'remote') return this.remoteCompletion(this.remoteTarget(entry), job, onText, signal)
    const model = await this.openLocal(entry, '', signal, () => undefined)
    let promptIds: number[]
    if ('prompt' in job.input) {
      promptIds = model.encodePrompt(job.input.prompt)
      if (promptIds.length >= model.contextLength) throw new ApiError('ContextOverflowError', `The prompt needs ${promptIds.length} tokens, but the model's context holds ${model.contextLength}.`)
    } else {
      const system = job.input.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n')
      promptIds = buildPrompt(model, system, job.input.messages.filter((m) => m.role !== 'system'), job.maxTokens).promptIds
    }
    const { pace } = this.deps
    const generation = model.generate({
      promptIds,
      maxTokens: job.maxTokens,
      signal,
      stopStrings: job.stopStrings,
      sampling: { temperature: job.temperature, topP: job.topP, seed: job.seed ?? randomInt(2 ** 31) },
      ...(pace !== undefined && { pace: () => pace(signal) }),
      ...(this.deps.kvSnapshots !== undefined && { restore: this.deps.kvSnapshots.restorer(model) })
    })
    this.generating = true
    this.deps.onGenerationStart?.()
    try {
      for await (const event of generation) {
        this.tokensStreamed++
        if (event.text !== '') onText(event.text)
      }
      const r = await generation.result
      const finishReason = r.stopReason === 'max-tokens' || r.stopReason === 'context-full' ? 'length' : 'stop'
      return { text: r.text, finishReason, promptTokens: r.stats.promptTokens, completionTokens: r.stats.generatedTokens }
    } finally {
      this.generating = false
    }
  }

  /** The producer of a chat reply. */
  private chatReply(conversationId: string, emit: (event: ChatEvent) => void): Producer {
    return (assistant, signal, onText) => this.stream(conversationId, assistant, signal, safely(emit), onText)
  }

  /**
   * The producer of a file's summary: the map-reduce on the conversation's model, a 'progress' event after each
   * step, the final summary streamed as deltas. Stopped midway, the reply keeps the summary text written so far.
   */
  private summaryReply(conversationId: string, text: string, emit: (event: ChatEvent) => void): Producer {
    return async (assistant, signal, onText) => {
      const conversation = this.deps.conversations.require(conversationId)
      const { maxTokens } = conversation.sampling
      const entry = await this.deps.models.pick(conversation.modelId)
      const summary = { text, assistant, signal, emit, onText }
      if (entry.format === 'remote') {
        const target = this.remoteTarget(entry)
        const runs: RemoteRun[] = []
        const model = remoteSummaryModel(target, { onRun: (r) => runs.push(r), onPiece: () => this.tokensStreamed++, nowMs: this.monotonicMs })
        const { content, ttftMs } = await this.writeSummary(model, maxTokens, summary)
        return { content, status: signal.aborted ? 'stopped' : 'complete', error: null, stats: remoteStats(runs, entry.name, target.serverName, ttftMs) }
      }
      const local = await this.openLocal(entry, assistant.id, signal, emit)
      const all: GenerationStats[] = []
      const { pace } = this.deps
      const model = textSummaryModel(local, {
        onToken: () => this.tokensStreamed++,
        onStats: (s) => all.push(s),
        ...(pace !== undefined && { pace: () => pace(signal) })
      })
      this.generating = true
      this.deps.onGenerationStart?.()
      try {
        const { content, ttftMs } = await this.writeSummary(model, maxTokens, summary)
        return { content, status: signal.aborted ? 'stopped' : 'complete', error: null, stats: this.messageStats(entry, combineStats(all, ttftMs)) }
      } finally {
        this.generating = false
      }
    }
  }

  /**
   * The map-reduce summary of `text` by `model`, a 'progress' event after each step and the final summary streamed
   * into `assistant`; stopped midway, what was written so far (trimmed) and the wait before its first piece.
   */
  private async writeSummary<P extends { readonly length: number }>(
    model: SummaryModel<P>,
    maxTokens: number,
    r: { readonly text: string; readonly assistant: StoredMessage; readonly signal: AbortSignal; readonly emit: (event: ChatEvent) => void; readonly onText: (text: string) => void }
  ): Promise<{ content: string; ttftMs: number }> {
    const started = this.monotonicMs()
    let ttftMs = 0
    let content = ''
    const add = this.replyText(r.assistant.id, r.emit, r.onText)
    try {
      await summarize(r.text, model, {
        maxSummaryTokens: Math.min(maxTokens, Math.floor(model.contextLength / 4)),
        signal: r.signal,
        nowMs: this.monotonicMs,
        onProgress: (p) => r.emit({ type: 'progress', messageId: r.assistant.id, done: p.done, total: p.total, etaMs: p.etaMs }),
        onText: (piece) => {
          if (content === '') ttftMs = this.monotonicMs() - started
          content = add(piece)
        }
      })
    } catch (err) {
      if (!r.signal.aborted) throw err
    }
    return { content: content.trim(), ttftMs }
  }

  /** A model on this computer, opened with the placement for it (resolved per request: a change applies to the next one). */
  private async openLocal(entry: ModelEntry, messageId: string, signal: AbortSignal, emit: (event: ChatEvent) => void): Promise<TextModel> {
    const placed = await this.deps.devices.placementFor(entry, { beforeMeasuring: () => this.slot.release(), signal })
    return this.slot.acquire(entry, placed, (progress) => emit({ type: 'loading', messageId, progress }))
  }

  /** Where a request for another server's model goes. */
  private remoteTarget(entry: ModelEntry): RemoteTarget {
    if (this.deps.servers === undefined) throw new ApiError('ModelError', `${entry.name} runs on another server, which this app was started without.`)
    return this.deps.servers.target(entry)
  }

  /** A chat reply from another server: the conversation's messages (trimmed to its stated context), streamed into `assistant`. */
  private async remoteReply(
    target: RemoteTarget,
    entry: ModelEntry,
    conversation: { readonly id: string; readonly systemPrompt: string; readonly sampling: { readonly maxTokens: number; readonly temperature: number; readonly topP: number } },
    assistant: StoredMessage,
    signal: AbortSignal,
    emit: (event: ChatEvent) => void,
    onText: (text: string) => void
  ): Promise<MessagePatch> {
    const { maxTokens, temperature, topP } = conversation.sampling
    const counter = { contextLength: target.contextLength ?? ASSUMED_REMOTE_CONTEXT, countTokens: estimateTokens, plain: false }
    const history = this.promptHistory(conversation.id, assistant.seq, counter, maxTokens)
    const system: ChatMessage[] = conversation.systemPrompt === '' ? [] : [{ role: 'system', content: conversation.systemPrompt }]
    const messages = remoteHistory([...system, ...history], target.contextLength, maxTokens)
    const add = this.replyText(assistant.id, emit, onText)
    const run = await runRemote(target, { messages }, { maxTokens, temperature, topP, seed: null, stop: [] }, signal, (piece) => {
      this.tokensStreamed++
      add(piece)
    }, this.monotonicMs)
    return { content: run.text, status: run.aborted ? 'stopped' : 'complete', error: null, stats: remoteStats([run], entry.name, target.serverName) }
  }

  /** A local API completion forwarded to another server. */
  private async remoteCompletion(target: RemoteTarget, job: CompletionJob, onText: (text: string) => void, signal: AbortSignal): Promise<CompletionOutcome> {
    const params = { maxTokens: job.maxTokens, temperature: job.temperature, topP: job.topP, seed: job.seed, stop: job.stopStrings }
    const run = await runRemote(target, job.input, params, signal, (piece) => {
      this.tokensStreamed++
      onText(piece)
    }, this.monotonicMs)
    signal.throwIfAborted()
    return { text: run.text, finishReason: run.finishReason, promptTokens: run.promptTokens, completionTokens: run.completionTokens }
  }

  /** A reply's stats as stored: the engine's, with the model's and devices' display names. */
  private messageStats(entry: ModelEntry, s: GenerationStats): NonNullable<MessagePatch['stats']> {
    const deviceBusy = s.devices.map((d) => ({ id: d.id, name: this.deps.devices.deviceName(d.id), busyMs: d.busyMs }))
    return {
      ttftMs: s.ttftMs,
      prefillTokensPerSec: s.prefillTokensPerSec,
      decodeTokensPerSec: s.decodeTokensPerSec,
      promptTokens: s.promptTokens,
      generatedTokens: s.generatedTokens,
      reusedTokens: s.reusedTokens,
      restoredTokens: s.restoredTokens,
      model: entry.name,
      devices: deviceBusy.map((d) => d.name),
      deviceBusy
    }
  }

  /**
   * Common path: checks, the synchronous store writes of `prepare` (user message), the 'streaming' assistant
   * message, the `started` event, then the queued generation.
   */
  private async start(
    requestId: string,
    conversationId: string,
    emit: (event: ChatEvent) => void,
    signal: AbortSignal | undefined,
    produce: Producer,
    prepare: () => StoredMessage | null
  ): Promise<Message> {
    if (this.disposed) throw new ApiError('ShutdownError', 'Tandem is shutting down.')
    if (this.active.has(requestId)) throw invalid(`Request id ${requestId} is already in use.`)
    for (const a of this.active.values()) {
      if (a.conversationId === conversationId) {
        throw new ApiError('BusyError', 'A reply is still being written in this conversation; stop it or wait for it to finish.')
      }
    }
    this.deps.conversations.require(conversationId)
    // a reply a full disk left unfinished gets its status first, now that this request may find space
    this.finisher.retry()
    const user = prepare()
    const assistant = this.deps.store.messages.append({ conversationId, role: 'assistant', content: '', status: 'streaming' })
    const controller = new AbortController()
    const active: Active = { conversationId, controller }
    this.active.set(requestId, active)
    const onCallerGone = (): void => controller.abort()
    signal?.addEventListener('abort', onCallerGone, { once: true })
    if (signal?.aborted) controller.abort()
    safely(emit)({ type: 'started', userMessage: user === null ? null : toApiMessage(user), assistantMessage: toApiMessage(assistant) })
    const run = this.enqueue(() => this.generate(assistant, controller, produce), this.laneOf(this.deps.conversations.require(conversationId).modelId))
    try {
      return await run
    } finally {
      this.active.delete(requestId)
      signal?.removeEventListener('abort', onCallerGone)
    }
  }

  /**
   * Runs one generation into `assistant` and finishes it (never left 'streaming', except while a full disk
   * refuses the finishing write: the ReplyFinisher retries it).
   */
  private async generate(assistant: StoredMessage, controller: AbortController, produce: Producer): Promise<Message> {
    const { signal } = controller
    let content = ''
    let final: MessagePatch
    let failure: ApiError | null = null
    try {
      final = signal.aborted ? { status: 'stopped' } : await produce(assistant, signal, (text) => (content = text))
    } catch (err) {
      this.generating = false
      // stopped before any text (e.g. while Auto measured the devices): a stop, not an error
      const stoppedEarly = signal.aborted && content === ''
      // an error (a write that failed, not the model) must not leave the model generating into nothing
      controller.abort()
      if (stoppedEarly) {
        final = { status: 'stopped' }
      } else if (isDiskFull(err)) {
        // cut short like a stop: the text generated so far is kept, the reason stored with it
        failure = new ApiError('DiskFullError', `The disk is full, so the reply stopped here: ${errorMessage(err)}. Free some space and try again.`, { cause: err })
        final = { content, status: 'stopped', error: failure.message }
      } else {
        failure = toApiError(err)
        final = { content, status: 'error', error: failure.message }
      }
    }
    let stored: StoredMessage | null = null
    try {
      stored = this.finisher.finish(assistant.id, final)
    } catch (err) {
      // the conversation was purged meanwhile; an earlier error still reaches the caller
      if (failure === null) throw err
    }
    if (failure !== null) throw failure
    if (stored === null) throw new ApiError('DiskFullError', 'The disk is full, so the reply could not be saved yet; it is saved as soon as there is space.')
    return toApiMessage(stored)
  }

  /** Streams the model's reply into `assistant` (throttled writes) and returns its finishing write; `onText` sees the text so far. */
  private async stream(
    conversationId: string,
    assistant: StoredMessage,
    signal: AbortSignal,
    emit: (event: ChatEvent) => void,
    onText: (text: string) => void
  ): Promise<MessagePatch> {
    const conversation = this.deps.conversations.require(conversationId)
    const entry = await this.deps.models.pick(conversation.modelId)
    if (entry.format === 'remote') return this.remoteReply(this.remoteTarget(entry), entry, conversation, assistant, signal, emit, onText)
    const model = await this.openLocal(entry, assistant.id, signal, emit)
    const { maxTokens, temperature, topP } = conversation.sampling
    const tok = model.info.tokenizer
    const counter = { contextLength: model.contextLength, countTokens: (t: string) => tok.encode(t, { addBos: false }).length, plain: model.info.chatTemplate === null }
    const history = this.promptHistory(conversationId, assistant.seq, counter, maxTokens)
    const { promptIds } = buildPrompt(model, conversation.systemPrompt, history, maxTokens)
    const { pace } = this.deps
    // A fresh seed per request, so regenerate gives a different reply (temperature 0 stays greedy).
    const generation = model.generate({
      promptIds,
      maxTokens,
      signal,
      sampling: { temperature, topP, seed: randomInt(2 ** 31) },
      ...(pace !== undefined && { pace: () => pace(signal) }),
      ...(this.deps.kvSnapshots !== undefined && { restore: this.deps.kvSnapshots.restorer(model) })
    })
    const add = this.replyText(assistant.id, emit, onText)
    this.generating = true
    this.deps.onGenerationStart?.()
    for await (const event of generation) {
      this.tokensStreamed++
      if (event.text !== '') add(event.text)
    }
    const r = await generation.result
    this.generating = false
    // off the reply's path: the save waits for nothing here and runs between generations
    const save = this.deps.kvSnapshots?.save(model)
    if (save !== undefined) this.saving = save.then(() => undefined, (err: unknown) => void process.stderr.write(`tandem: could not save the KV snapshot: ${errorMessage(err)}\n`))
    const stats = this.messageStats(entry, r.stats)
    return { content: r.text, status: r.stopReason === 'aborted' ? 'stopped' : 'complete', error: null, stats }
  }
}

/** `emit` for a caller that may be gone (a closed window): its failure must not break the generation. */
function safely<E>(emit: (event: E) => void): (event: E) => void {
  return (event) => {
    try {
      emit(event)
    } catch {
      // nobody to tell
    }
  }
}

/**
 * A pace that waits `delayMs` before each token after the first, or until the request is aborted, so a
 * reply of n tokens streams for at least (n − 1) · delayMs whatever the machine's speed.
 */
export function tokenDelay(delayMs: number): (signal: AbortSignal) => Promise<void> {
  return (signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve()
      const done = (): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, delayMs)
      signal.addEventListener('abort', done, { once: true })
    })
}

/** Splits text into user-perceived characters (an emoji with its modifiers or a ZWJ family stays whole). */
const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: 'grapheme' })

/**
 * A title from the first message: its first line, shortened at a word boundary. It is cut by graphemes,
 * not UTF-16 units, so an emoji at the cut is kept or dropped whole, never split into a lone surrogate.
 */
export function autoTitle(content: string): string {
  const line = content.trim().split('\n', 1)[0].trim()
  // Only as many graphemes as the title can hold are segmented (the line may be a million characters).
  // The UTF-16 length is capped too: 60 family emoji are 660 units, past what a title edit may send back.
  let cut = ''
  let count = 0
  let whole = true
  for (const { segment } of GRAPHEMES.segment(line)) {
    if (count === AUTO_TITLE_CHARS || cut.length + segment.length > API_LIMITS.maxTitleChars) {
      whole = false
      break
    }
    cut += segment
    count++
  }
  if (whole) return line
  const space = cut.lastIndexOf(' ')
  return `${(space > cut.length / 2 ? cut.slice(0, space) : cut).trimEnd()}…`
}
