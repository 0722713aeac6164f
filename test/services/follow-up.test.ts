/**
 * @file Follow-up questions about a file: the user's turn carries the parts of the file that share the most words with
 * the question, within the excerpt budget, in document order; a plain-prompt model gets "Answer:" to continue from.
 */
import { describe, expect, it } from 'vitest'
import { DocumentPassages, excerptBudget } from '../../main/services/documents/follow-up'

/** One token per word: enough to check budgets without a tokenizer. */
const model = { contextLength: 512, countTokens: (t: string): number => t.split(/\s+/).filter((w) => w !== '').length }

const ANIMALS = ['fox', 'owl', 'bear', 'frog', 'duck', 'cat', 'dog', 'deer', 'goat', 'hen']
const TEXT = ANIMALS.map((a) => `The ${a} walked along the river bank every single morning and counted the stones it found there.${a === 'deer' ? ' The deer found a golden compass named Quillon.' : ''}`).join('\n\n')
const FILE = { key: 'c1:abc', name: 'stories.pdf', text: TEXT }

describe('follow-up questions', () => {
  it('put the parts sharing the question’s words before it, within the budget', () => {
    const passages = new DocumentPassages()
    const turn = passages.question(model, FILE, 'Where is the compass Quillon?', 40, false)
    expect(turn.startsWith('Excerpts from stories.pdf:\n\n')).toBe(true)
    expect(turn).toContain('golden compass named Quillon')
    expect(turn.endsWith('\n\nQuestion: Where is the compass Quillon?')).toBe(true)
    const excerpts = turn.slice('Excerpts from stories.pdf:\n\n'.length, turn.lastIndexOf('\n\nQuestion:'))
    expect(model.countTokens(excerpts.replaceAll('[…]', ''))).toBeLessThanOrEqual(40)
    // the owl's part shares no word with the question that the deer's does not
    expect(turn).not.toContain('The owl')
  })

  it('a plain-prompt model gets "Answer:" after the question; a question without words takes the start', () => {
    const passages = new DocumentPassages()
    const turn = passages.question(model, FILE, '???', 40, true)
    expect(turn).toContain('The fox walked')
    expect(turn.endsWith('Question: ???\nAnswer:')).toBe(true)
  })

  it('the excerpt budget is half of what the context leaves after the reply (the reply capped at a quarter)', () => {
    expect(excerptBudget(512, 64)).toBe(224)
    expect(excerptBudget(512, 4000)).toBe(192)
    expect(excerptBudget(40, 30)).toBe(32)
  })
})
