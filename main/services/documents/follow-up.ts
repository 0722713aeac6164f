/**
 * @file Follow-up questions about a summarized file: the question goes to the model with the parts of the file that
 * share the most words with it (passages.ts), so a question about page 40 of a 50-page PDF is answered from page 40
 * even though the model's context holds a few pages.
 */
import { pickPassages } from './passages'
import { splitByTokens } from './split'

/** What the passages need from a model: its context and token counts. */
export interface PassageModel {
  readonly contextLength: number
  countTokens(text: string): number
}

/** Smallest part (tokens) a file is cut into for picking; smaller parts lose their sentences' context. */
const MIN_PASSAGE_TOKENS = 32
/** Parts per prompt the picker chooses among at most (a part is a quarter of the excerpt budget). */
const PASSAGES_PER_BUDGET = 4

/** Cuts a file's text into parts for the picker, keeping the last cut (a conversation asks several questions in a row). */
export class DocumentPassages {
  private last: { readonly key: string; readonly parts: readonly string[] } | null = null

  /**
   * The user's turn with the file's most relevant parts before the question, within `budgetTokens` of excerpts;
   * `plain` (a model without a chat template) ends it with "Answer:" so the continuation is the answer.
   */
  question(model: PassageModel, file: { readonly key: string; readonly name: string; readonly text: string }, question: string, budgetTokens: number, plain: boolean): string {
    const partTokens = Math.max(MIN_PASSAGE_TOKENS, Math.floor(budgetTokens / PASSAGES_PER_BUDGET))
    const key = `${file.key}:${partTokens}`
    if (this.last?.key !== key) this.last = { key, parts: splitByTokens(file.text, (t) => model.countTokens(t), partTokens) }
    const passages = pickPassages(this.last.parts, question, (t) => model.countTokens(t), budgetTokens)
    const excerpts = passages.map((p) => p.text.trim()).join('\n\n[…]\n\n')
    return `Excerpts from ${file.name}:\n\n${excerpts}\n\nQuestion: ${question}${plain ? '\nAnswer:' : ''}`
  }
}

/** Tokens of excerpts a follow-up may carry: half of what the context leaves after the reply, the rest for the conversation. */
export function excerptBudget(contextLength: number, replyTokens: number): number {
  return Math.max(MIN_PASSAGE_TOKENS, Math.floor((contextLength - Math.min(replyTokens, Math.floor(contextLength / 4))) / 2))
}
