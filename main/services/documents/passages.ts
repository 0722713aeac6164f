/**
 * @file Picking the parts of a document that bear on a follow-up question, by plain lexical overlap (BM25 over the
 * parts' words; no embedding model): the best-scoring parts that fit the token budget, put back in document order so
 * the prompt reads as the file does.
 */

/** BM25's usual constants: term-frequency saturation and length normalization. */
const K1 = 1.2
const B = 0.75

/** Words too common to tell parts apart. */
const STOP_WORDS = new Set(
  'a an and are as at be but by for from had has have he her his i if in into is it its me my no not of on or our she so that the their them then there these they this to was we were what when where which who why will with you your'.split(' ')
)

/** The words of a text that count: lower case, letters and digits, no stop words. */
export function wordsOf(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1 && !STOP_WORDS.has(w))
}

/** A part chosen for the prompt: its index in the document and its text. */
export interface Passage {
  readonly index: number
  readonly text: string
  readonly score: number
}

/**
 * The parts most relevant to `question` whose token counts (`tokensOf`) sum to at most `maxTokens`, in document
 * order. Parts sharing no word with the question are not picked; a question with no usable word picks the parts from
 * the start that fit (the start of a document is the usual context).
 */
export function pickPassages(parts: readonly string[], question: string, tokensOf: (text: string) => number, maxTokens: number): Passage[] {
  const query = [...new Set(wordsOf(question))]
  const docs = parts.map((p) => wordsOf(p))
  const avgLength = docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length)
  const df = new Map<string, number>()
  for (const d of docs) for (const w of new Set(d)) if (query.includes(w)) df.set(w, (df.get(w) ?? 0) + 1)
  const scored = docs.map((d, index) => {
    const tf = new Map<string, number>()
    for (const w of d) if (df.has(w)) tf.set(w, (tf.get(w) ?? 0) + 1)
    let score = 0
    for (const [w, f] of tf) {
      const idf = Math.log(1 + (docs.length - (df.get(w) ?? 0) + 0.5) / ((df.get(w) ?? 0) + 0.5))
      score += (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.length) / Math.max(1, avgLength)))
    }
    return { index, text: parts[index], score }
  })
  const fromStart = query.length === 0
  const ranked = fromStart ? scored : scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score || a.index - b.index)
  const picked: Passage[] = []
  let used = 0
  for (const s of ranked) {
    const n = tokensOf(s.text)
    if (used + n > maxTokens) {
      // from the start, the first part that does not fit ends the run (no gap); by score, a smaller one may still fit
      if (fromStart) break
      continue
    }
    picked.push(s)
    used += n
  }
  return picked.sort((a, b) => a.index - b.index)
}
