import { describe, expect, it } from 'vitest'
import { ChatTemplateError, renderChatTemplate } from '../../main/engine/model/chat-template'
import { CHATML_TEMPLATE } from '../fixtures/synthetic-vocab'

const opts = { bosToken: '<s>', eosToken: '</s>', addGenerationPrompt: true }

describe('renderChatTemplate', () => {
  it('renders ChatML with the generation prompt', () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' }
    ]
    expect(renderChatTemplate(CHATML_TEMPLATE, messages, opts)).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n'
    )
    expect(renderChatTemplate(CHATML_TEMPLATE, messages, { ...opts, addGenerationPrompt: false })).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n'
    )
  })

  it('passes bos_token and eos_token', () => {
    const template = "{{ bos_token }}{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}{{ eos_token }}{% endfor %}"
    expect(renderChatTemplate(template, [{ role: 'user', content: 'x' }], opts)).toBe('<s>[user] x</s>')
  })

  it('surfaces raise_exception from the template', () => {
    const template = "{% if messages[0]['role'] != 'user' %}{{ raise_exception('Conversations must start with user') }}{% endif %}ok"
    expect(renderChatTemplate(template, [{ role: 'user', content: 'x' }], opts)).toBe('ok')
    expect(() => renderChatTemplate(template, [{ role: 'assistant', content: 'x' }], opts)).toThrow(
      /chat template failed to render: Conversations must start with user/
    )
  })

  it('reports templates that do not parse or render', () => {
    expect(() => renderChatTemplate('{% for m in messages %}', [], opts)).toThrow(ChatTemplateError)
    expect(() => renderChatTemplate('{{ messages[0].content.nope() }}', [{ role: 'user', content: 'x' }], opts)).toThrow(
      /chat template failed to render/
    )
  })
})
