/**
 * @file Renders a model's Jinja chat template (Hugging Face `chat_template`, GGUF
 * `tokenizer.chat_template`) with @huggingface/jinja, with the variables templates expect
 * (messages, bos_token, eos_token, add_generation_prompt; raise_exception and strftime_now are built in).
 */
import { Template } from '@huggingface/jinja'

/** One chat turn as templates see it. */
export interface ChatMessage {
  readonly role: string
  readonly content: string
}

/** Special-token strings and whether to open the assistant's turn at the end. */
export interface ChatTemplateOptions {
  readonly bosToken: string
  readonly eosToken: string
  readonly addGenerationPrompt: boolean
}

/** A chat template failed to parse or render (including the template's own raise_exception). */
export class ChatTemplateError extends Error {
  override readonly name = 'ChatTemplateError'
}

/** Largest template source accepted (real ones are a few kB; this bounds parser work). */
export const MAX_CHAT_TEMPLATE_CHARS = 1 << 20

const parsed = new Map<string, Template>()
const MAX_CACHED_TEMPLATES = 16

function compile(source: string): Template {
  const cached = parsed.get(source)
  if (cached) return cached
  if (source.length > MAX_CHAT_TEMPLATE_CHARS) {
    throw new ChatTemplateError(`chat template is ${source.length} characters, more than the limit ${MAX_CHAT_TEMPLATE_CHARS}`)
  }
  let template: Template
  try {
    template = new Template(source)
  } catch (e) {
    throw new ChatTemplateError(`chat template does not parse: ${e instanceof Error ? e.message : String(e)}`)
  }
  if (parsed.size >= MAX_CACHED_TEMPLATES) parsed.clear()
  parsed.set(source, template)
  return template
}

/** Renders `messages` through the template into the prompt text the model was trained on. */
export function renderChatTemplate(template: string, messages: readonly ChatMessage[], opts: ChatTemplateOptions): string {
  const compiled = compile(template)
  try {
    return compiled.render({
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      bos_token: opts.bosToken,
      eos_token: opts.eosToken,
      add_generation_prompt: opts.addGenerationPrompt
    })
  } catch (e) {
    // The library's built-in raise_exception(msg) throws a plain Error(msg), so the template's own
    // message (e.g. "Conversation roles must alternate") ends up here verbatim.
    throw new ChatTemplateError(`chat template failed to render: ${e instanceof Error ? e.message : String(e)}`)
  }
}
