/**
 * @file The summarizer's text handling (issue #15): extraction per type on files the tests write (HTML's visible text
 * only, never its scripts or styles; a multi-page PDF without its running header; a .docx), bad input (an encrypted
 * or corrupt PDF, a corrupt .docx) refused with a clear message before any work (binary renamed .txt, invalid UTF-8, empty,
 * unsupported, too big), token-aware splitting with a real tokenizer (no part over budget, parts joined give the text
 * back: nothing lost or repeated), running headers and footers removed from pages, and the follow-up passage picker.
 */
import { mkdirSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { loadModel, type Tokenizer } from '../../main/engine'
import { checkDocumentSize, DocumentError, documentTypeOf, extractDocument, htmlVisibleText, MAX_DOCUMENT_BYTES } from '../../main/services/documents/extract'
import { joinPages, normalizeWhitespace } from '../../main/services/documents/clean'
import { splitByTokens, type TokenCounter } from '../../main/services/documents/split'
import { pickPassages } from '../../main/services/documents/passages'
import { readDocumentFile } from '../../main/services/documents/read-file'
import { writeDocx } from '../fixtures/docx-writer'
import { writePdf } from '../fixtures/pdf-writer'
import { Rng } from '../fixtures/rng'
import { sharedModel, tempDir } from '../helpers/paths'

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s)

let tokenizer: Tokenizer
let count: TokenCounter
beforeAll(async () => {
  tokenizer = (await loadModel(sharedModel('stories260K/stories260K.gguf'), { weights: false })).tokenizer
  count = (text) => tokenizer.encode(text, { addBos: false }).length
})

describe('reading a document file', () => {
  it('reads a file whole, and refuses a missing file, a folder, an unsupported name and an oversized file before reading', async () => {
    const dir = tempDir('tandem-documents-')
    try {
      const ok = join(dir.dir, 'notes.md')
      writeFileSync(ok, '# Notes\n\nSome text.')
      expect(await readDocumentFile(ok)).toEqual({ name: 'notes.md', bytes: utf8('# Notes\n\nSome text.') })
      await expect(readDocumentFile(join(dir.dir, 'gone.txt'))).rejects.toThrow(/gone\.txt was not found \(it may have been moved or deleted\)/)
      mkdirSync(join(dir.dir, 'folder.txt'))
      await expect(readDocumentFile(join(dir.dir, 'folder.txt'))).rejects.toThrow(/is not a regular file/)
      await expect(readDocumentFile(join(dir.dir, 'movie.mp4'))).rejects.toThrow(/\.mp4 files cannot be summarized/)
      // a sparse file over the limit: refused from its size, never read
      const big = join(dir.dir, 'big.txt')
      writeFileSync(big, '')
      truncateSync(big, MAX_DOCUMENT_BYTES + 1)
      await expect(readDocumentFile(big)).rejects.toThrow(/big\.txt is 64\.0 MiB; files up to 64 MiB/)
    } finally {
      dir.dispose()
    }
  })
})

describe('extracting a document', () => {
  it('reads HTML as the text a browser shows: no script, style or comment, blocks on their own lines, entities decoded', async () => {
    const html = `<!doctype html><html><head><title>Ignored title</title><style>p { color: red }</style>
      <script>var secret = "LEAK-1"; document.write('<p>LEAK-2</p>')</script></head>
      <body><h1>Caf&eacute; &amp; Bakery</h1><!-- LEAK-3 --><p>Fresh   bread&nbsp;daily.<br>Open at 7&#58;00 &#x2014; every day.</p>
      <noscript>LEAK-4</noscript><template><p>LEAK-5</p></template><svg><text>LEAK-6</text></svg>
      <table><tr><th>Item</th><td>Price</td></tr><tr><td>Roll</td><td>&pound;1</td></tr></table>
      <p>Unknown &madeup; stays</p><script src="x.js"></script></body></html>`
    const text = htmlVisibleText(html)
    expect(text).not.toMatch(/LEAK|secret|color|Ignored/)
    expect(text.split('\n').filter((l) => l !== '')).toEqual(['Café & Bakery', 'Fresh bread daily.', 'Open at 7:00 — every day.', 'Item\tPrice', 'Roll\t£1', 'Unknown &madeup; stays'])
    await expect(extractDocument('page.HTML', utf8(html))).resolves.toMatchObject({ type: 'html' })
  })

  it('keeps text, Markdown, CSV, JSON and code as they are', async () => {
    for (const [name, type] of [['notes.txt', 'text'], ['README.md', 'markdown'], ['data.csv', 'csv'], ['x.json', 'json'], ['main.rs', 'code'], ['app.tsx', 'code']] as const) {
      const body = `first line, "quoted"\n\n\tsecond ✓ line\n`
      expect(await extractDocument(name, utf8(body))).toEqual({ type, text: body })
    }
    // a UTF-8 byte-order mark is not text
    expect((await extractDocument('bom.txt', new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('hi')]))).text).toBe('hi')
  })

  it('reads a multi-page PDF page by page without its running header and page numbers', async () => {
    const topics = ['sales', 'hiring', 'travel', 'energy', 'rent', 'software', 'training', 'outlook']
    const pages = topics.map((t, i) => ['Quarterly Report (confidential)', `Section ${String.fromCharCode(65 + i)}`, `Spending on ${t} rose by ${i + 2}%.`, `The ${t} team expects more next year.`, `Page ${i + 1} of 8`])
    const doc = await extractDocument('report.pdf', writePdf(pages))
    expect(doc.type).toBe('pdf')
    expect(doc.text).not.toMatch(/Quarterly Report|Page \d of 8/)
    topics.forEach((t, i) => expect(doc.text).toContain(`Section ${String.fromCharCode(65 + i)}\nSpending on ${t} rose by ${i + 2}%.\nThe ${t} team expects more next year.`))
  })

  it('reads a Word document as its paragraphs', async () => {
    const doc = await extractDocument('letter.docx', writeDocx(['# Dear team', 'Thank you for   the work & care.', '', 'Best, Ana']))
    expect(doc).toEqual({ type: 'docx', text: 'Dear team\n\nThank you for the work & care.\n\nBest, Ana' })
  })

  it('refuses an encrypted or corrupt PDF and a corrupt Word file with a message', async () => {
    await expect(extractDocument('secret.pdf', writePdf([['hidden']], { encrypted: true }))).rejects.toThrow(/secret\.pdf is encrypted \(password-protected\)/)
    const pdf = writePdf([['text']])
    await expect(extractDocument('cut.pdf', pdf.subarray(0, 40))).rejects.toThrow(/cut\.pdf is not a readable PDF/)
    await expect(extractDocument('fake.pdf', utf8('just text, not a PDF'))).rejects.toThrow(DocumentError)
    await expect(extractDocument('fake.docx', utf8('plain text renamed'))).rejects.toThrow(/fake\.docx is not a readable Word document/)
    await expect(extractDocument('blank.pdf', writePdf([[], []]))).rejects.toThrow(/no text to summarize \(a scanned PDF/)
  })

  it('refuses bad input with a message that says what is wrong, before reading a large file', async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])
    await expect(extractDocument('photo.txt', png)).rejects.toThrow(/photo\.txt is not a text file \(it contains binary data\)/)
    await expect(extractDocument('latin1.txt', new Uint8Array([0x63, 0x61, 0x66, 0xe9]))).rejects.toThrow(/not UTF-8 text/)
    await expect(extractDocument('empty.md', new Uint8Array())).rejects.toThrow(/empty.md is empty/)
    await expect(extractDocument('blank.txt', utf8(' \n\t\n'))).rejects.toThrow(/no text to summarize/)
    await expect(extractDocument('only-script.html', utf8('<script>x()</script>'))).rejects.toThrow(/no text to summarize/)
    expect(() => documentTypeOf('archive.zip')).toThrow(/\.zip files cannot be summarized\. Supported: \.txt/)
    expect(() => documentTypeOf('Makefile')).toThrow(/without an extension/)
    // a 1 GB file is refused from its size alone
    expect(() => checkDocumentSize('huge.txt', 1024 ** 3)).toThrow(/huge\.txt is 1\.0 GiB; files up to 64 MiB/)
    expect(() => checkDocumentSize('ok.txt', MAX_DOCUMENT_BYTES)).not.toThrow()
    await expect(extractDocument('photo.txt', png)).rejects.toThrow(DocumentError)
    expect(() => documentTypeOf('a.zip')).toThrow(DocumentError)
  })
})

/** A story-like text of `paragraphs` paragraphs of sentences, seeded. */
function story(rng: Rng, paragraphs: number): string {
  const words = ['the', 'little', 'dog', 'ran', 'to', 'a', 'big', 'tree', 'and', 'saw', 'bird', 'happy', 'Lily', 'played', 'with', 'her', 'ball', 'in', 'park']
  const sentence = (): string => {
    const n = 4 + Math.floor(rng.uniform() * 14)
    const s = Array.from({ length: n }, () => words[Math.floor(rng.uniform() * words.length)]).join(' ')
    return `${s[0].toUpperCase()}${s.slice(1)}${['.', '!', '?', '.'][Math.floor(rng.uniform() * 4)]}`
  }
  return Array.from({ length: paragraphs }, () => Array.from({ length: 1 + Math.floor(rng.uniform() * 8) }, sentence).join(' ')).join('\n\n')
}

describe('splitting by tokens', () => {
  it('cuts a long text into parts within the budget that join back to the text, at paragraph or sentence ends', () => {
    const rng = new Rng(7)
    for (const budget of [24, 64, 200]) {
      const text = story(rng, 60)
      const parts = splitByTokens(text, count, budget)
      expect(parts.join('')).toBe(text)
      for (const p of parts) expect(count(p)).toBeLessThanOrEqual(budget)
      expect(parts.length).toBeGreaterThan(1)
      // no part but the last ends inside a word: each ends at whitespace, after a sentence or paragraph when one fits
      for (const p of parts.slice(0, -1)) expect(p).toMatch(/\s$/)
      const sentenceEnds = parts.slice(0, -1).filter((p) => /[.!?]\s+$/.test(p)).length
      expect(sentenceEnds / (parts.length - 1)).toBeGreaterThan(budget >= 64 ? 0.9 : 0.5)
    }
  })

  it('cuts a word longer than the budget by characters, never half a surrogate pair; an empty text has no parts', () => {
    const blob = `See ${'QUJD'.repeat(300)} and ${'🐶'.repeat(200)} end.`
    const parts = splitByTokens(blob, count, 16)
    expect(parts.join('')).toBe(blob)
    for (const p of parts) {
      expect(count(p)).toBeLessThanOrEqual(16)
      expect(p).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/)
    }
    expect(splitByTokens('', count, 8)).toEqual([])
    expect(() => splitByTokens('x', count, 0)).toThrow(RangeError)
  })

  it('re-cuts a group whose whole counts more than its pieces (a tokenizer that merges across boundaries)', () => {
    // a counter where a group costs one token more than the sum of its pieces
    const merging: TokenCounter = (t) => Math.ceil(t.length / 4) + (t.includes('\n\n') ? 1 : 0)
    const text = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} says something.`).join('\n\n')
    const parts = splitByTokens(text, merging, 20)
    expect(parts.join('')).toBe(text)
    for (const p of parts) expect(merging(p)).toBeLessThanOrEqual(20)
  })
})

describe('cleaning pages', () => {
  it('removes running headers and footers (page numbers differ), keeps the body and a heading that repeats only once', () => {
    const seasons = ['Spring', 'Summer', 'Autumn', 'Winter', 'Outlook', 'Appendix']
    const pages = seasons.map((season, i) => `ACME Annual Report 2026\n${season}\n\nBody text   of page ${i + 1}.\n  Second line.\n\nPage ${i + 1} of 6`)
    const text = joinPages(pages)
    expect(text).not.toMatch(/ACME Annual Report|Page \d of 6/)
    for (let i = 1; i <= 6; i++) expect(text).toContain(`Body text of page ${i}.\nSecond line.`)
    for (const season of seasons) expect(text).toContain(season)
    // two pages are too few to tell a header from content
    expect(joinPages(pages.slice(0, 2))).toContain('ACME Annual Report 2026')
    expect(normalizeWhitespace('a  \t b\r\n\r\n\r\n\r\nc  ')).toBe('a b\n\nc')
  })
})

describe('picking passages for a follow-up question', () => {
  it('takes the parts that share the rare words of the question, within the budget, in document order', () => {
    const parts = [
      'The farm had cows and a red barn.',
      'A dragon lived in the cave above the village.',
      'Every morning the baker sold bread.',
      'The dragon guarded gold and slept on it.',
      'Children played near the river all day.'
    ]
    const tokens = (t: string): number => t.split(' ').length
    const picked = pickPassages(parts, 'Where did the dragon live, and what did it guard?', tokens, 100)
    expect(picked.map((p) => p.index)).toEqual([1, 3])
    // a budget for one part keeps the best one
    const one = pickPassages(parts, 'What did the dragon guard? gold', tokens, 10)
    expect(one.map((p) => p.index)).toEqual([3])
    // no usable word: the start of the document
    expect(pickPassages(parts, 'and the?', tokens, 17).map((p) => p.index)).toEqual([0, 1])
    expect(pickPassages(parts, 'and the?', tokens, 16).map((p) => p.index)).toEqual([0])
  })
})
