/**
 * @file Conversations as Markdown to read (the export's other format; it is not imported back): the title as a
 * heading, a line with the model and dates, where a branch came from and which file a summary is of, then each
 * message under "You" / "Assistant" with a reply's stats as a short italic line. Message text is written as is:
 * replies are Markdown already.
 */
import type { MessageStats } from '../../preload/api'
import type { FileConversation, FileMessage } from './conversation-file'

/** Heading of a conversation without a title (as the sidebar calls it). */
const UNTITLED = 'Untitled chat'

/** Who wrote a message, as the headings name them. */
const ROLE_LABELS: Readonly<Record<FileMessage['role'], string>> = { user: 'You', assistant: 'Assistant', system: 'System' }

/** A date and time, the same wherever it is read: "2026-12-02 14:05 UTC". */
function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`
}

/** Milliseconds: "12 ms", "1.4 s". */
function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`
}

/** Tokens per second, one decimal below 100. */
function formatRate(tokensPerSec: number): string {
  return tokensPerSec >= 100 ? String(Math.round(tokensPerSec)) : tokensPerSec.toFixed(1)
}

/** Bytes: "840 B", "12.5 KB", "3.2 MB". */
function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`
  return bytes < 1_000_000 ? `${(bytes / 1000).toFixed(1)} KB` : `${(bytes / 1_000_000).toFixed(1)} MB`
}

/** A model id (a path) as its file or folder name. */
function modelName(modelId: string | null): string {
  return modelId === null ? "the app's default" : (modelId.split(/[\\/]/).filter((part) => part !== '').at(-1) ?? modelId)
}

/** A reply's stats line: "*45 tokens · 850 tok/s · first token after 12 ms · stories260K.bin on CPU*". */
export function statsLine(stats: MessageStats): string {
  const devices = [...new Set(stats.devices.map((d) => (/^[a-z]+$/.test(d) ? d.toUpperCase() : d)))].join(' + ')
  const on = devices === '' ? stats.model : `${stats.model} on ${devices}`
  return `*${stats.generatedTokens} tokens · ${formatRate(stats.decodeTokensPerSec)} tok/s · first token after ${formatMs(stats.ttftMs)} · ${on}*`
}

/** Text as a Markdown block quote (each line quoted, so a multi-line prompt stays inside it). */
function quote(text: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? '>' : `> ${line}`))
    .join('\n')
}

function messageMarkdown(m: FileMessage): string {
  const parts = [`### ${ROLE_LABELS[m.role]}`, m.content.trim() === '' ? '*(no text)*' : m.content.trim()]
  if (m.stats !== null) parts.push(statsLine(m.stats))
  if (m.status === 'stopped') parts.push('*Stopped before the end.*')
  else if (m.status === 'streaming') parts.push('*Still being written when exported.*')
  else if (m.status === 'error') parts.push(`*Error: ${m.error ?? 'the reply failed'}*`)
  return parts.join('\n\n')
}

/** One conversation; `parentTitle` names the conversation a branch came from (null: not known here). */
export function conversationMarkdown(c: FileConversation, parentTitle: string | null): string {
  const lines = [`# ${c.title === '' ? UNTITLED : c.title}`, `*Model: ${modelName(c.modelId)} · started ${formatTime(c.createdAtMs)} · last changed ${formatTime(c.updatedAtMs)}*`]
  if (c.parentId !== null) lines.push(parentTitle === null ? '*A branch of another conversation.*' : `*A branch of “${parentTitle === '' ? UNTITLED : parentTitle}”.*`)
  if (c.document !== null) lines.push(`*A summary of the file ${c.document.name} (${c.document.type}, ${formatSize(c.document.bytes)}).*`)
  if (c.systemPrompt.trim() !== '') lines.push(`**System prompt**\n\n${quote(c.systemPrompt.trim())}`)
  return [...lines, ...c.messages.map(messageMarkdown)].join('\n\n') + '\n'
}

/** Several conversations, separated by rules. */
export function conversationsMarkdown(conversations: readonly FileConversation[], parentTitle: (id: string) => string | null): string {
  return conversations.map((c) => conversationMarkdown(c, c.parentId === null ? null : parentTitle(c.parentId))).join('\n---\n\n')
}
