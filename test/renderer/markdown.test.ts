/**
 * @file The renderer's Markdown parser (pure functions, so Vitest runs it without a browser): the block and
 * inline structure chat replies use, the forgiving cases streaming produces (unclosed fences), and that
 * unsafe links never become links.
 */
import { describe, expect, it } from 'vitest'
import { parseBlocks } from '../../renderer/src/markdown/blocks'
import { parseInline, safeHref } from '../../renderer/src/markdown/inline'

describe('parseBlocks', () => {
  it('splits headings, paragraphs, rules and quotes', () => {
    const blocks = parseBlocks('# Title\n\nFirst line\nsecond line\n\n---\n\n> quoted\n> more')
    expect(blocks).toEqual([
      { kind: 'heading', level: 1, text: 'Title' },
      { kind: 'paragraph', text: 'First line\nsecond line' },
      { kind: 'rule' },
      { kind: 'quote', blocks: [{ kind: 'paragraph', text: 'quoted\nmore' }] }
    ])
  })

  it('keeps fenced code verbatim, with its language, and treats an unclosed fence as code (streaming)', () => {
    const closed = parseBlocks('```ts\nconst a = 1 // *not emphasis*\n\n  indented\n```\nafter')
    expect(closed).toEqual([
      { kind: 'code', lang: 'ts', code: 'const a = 1 // *not emphasis*\n\n  indented', closed: true },
      { kind: 'paragraph', text: 'after' }
    ])
    expect(parseBlocks('Here:\n```py\nprint(1)')).toEqual([
      { kind: 'paragraph', text: 'Here:' },
      { kind: 'code', lang: 'py', code: 'print(1)', closed: false }
    ])
  })

  it('parses bullet, ordered and nested lists', () => {
    const blocks = parseBlocks('- one\n- two\n  - two.a\n  - two.b\n- three\n\n3. c\n4. d')
    expect(blocks).toEqual([
      {
        kind: 'list',
        ordered: false,
        start: 1,
        items: [
          [{ kind: 'paragraph', text: 'one' }],
          [
            { kind: 'paragraph', text: 'two' },
            { kind: 'list', ordered: false, start: 1, items: [[{ kind: 'paragraph', text: 'two.a' }], [{ kind: 'paragraph', text: 'two.b' }]] }
          ],
          [{ kind: 'paragraph', text: 'three' }]
        ]
      },
      { kind: 'list', ordered: true, start: 3, items: [[{ kind: 'paragraph', text: 'c' }], [{ kind: 'paragraph', text: 'd' }]] }
    ])
  })

  it('does not turn a wrapped "2019. we" line into a list', () => {
    expect(parseBlocks('It happened in\n2019. We moved.')).toEqual([{ kind: 'paragraph', text: 'It happened in\n2019. We moved.' }])
  })

  it('parses tables with alignment and escaped pipes', () => {
    expect(parseBlocks('| a | b |\n|:--|--:|\n| 1 | x \\| y |\n| `p|q` | 3 |')).toEqual([
      {
        kind: 'table',
        header: ['a', 'b'],
        align: ['left', 'right'],
        rows: [
          ['1', 'x | y'],
          ['`p|q`', '3']
        ]
      }
    ])
  })

  it('parses a long reply of unclosed markers without catastrophic backtracking', () => {
    // 2000 lines of unclosed *, _ and ` markers: ~0.1 s of CPU on the dev machine. Catastrophic backtracking
    // (a regex retrying exponentially many ways) would not finish in hours, so a bound 50× above the real cost
    // gives the same verdict on a machine 10× faster or 10× slower; it counts this process's CPU time, not
    // wall time, so other processes saturating the cores do not count either.
    const text = Array.from({ length: 2000 }, (_, i) => `Line ${i} with *stars and _underscores and \`ticks`).join('\n')
    const before = process.cpuUsage()
    const blocks = parseBlocks(text)
    let pieces = 0
    for (const b of blocks) if (b.kind === 'paragraph') pieces += parseInline(b.text).length
    const used = process.cpuUsage(before)
    expect(pieces).toBeGreaterThan(0)
    expect((used.user + used.system) / 1000).toBeLessThan(5000)
  })
})

describe('parseInline', () => {
  it('parses code, strong, emphasis, strikethrough and line breaks', () => {
    expect(parseInline('a `x*y` **b** *c* _d_ ~~e~~\nf')).toEqual([
      { kind: 'text', text: 'a ' },
      { kind: 'code', text: 'x*y' },
      { kind: 'text', text: ' ' },
      { kind: 'strong', children: [{ kind: 'text', text: 'b' }] },
      { kind: 'text', text: ' ' },
      { kind: 'em', children: [{ kind: 'text', text: 'c' }] },
      { kind: 'text', text: ' ' },
      { kind: 'em', children: [{ kind: 'text', text: 'd' }] },
      { kind: 'text', text: ' ' },
      { kind: 'del', children: [{ kind: 'text', text: 'e' }] },
      { kind: 'break' },
      { kind: 'text', text: 'f' }
    ])
  })

  it('leaves snake_case, lone stars and escapes as text', () => {
    expect(parseInline('snake_case_name 2 * 3 = 6 \\*not\\*')).toEqual([{ kind: 'text', text: 'snake_case_name 2 * 3 = 6 *not*' }])
  })

  it('makes links only for http(s) and mailto', () => {
    expect(parseInline('[site](https://example.com/a) <http://x.org> see https://y.org/p.')).toEqual([
      { kind: 'link', href: 'https://example.com/a', children: [{ kind: 'text', text: 'site' }] },
      { kind: 'text', text: ' ' },
      { kind: 'link', href: 'http://x.org/', children: [{ kind: 'text', text: 'http://x.org' }] },
      { kind: 'text', text: ' see ' },
      { kind: 'link', href: 'https://y.org/p', children: [{ kind: 'text', text: 'https://y.org/p' }] },
      { kind: 'text', text: '.' }
    ])
    // Unsafe targets keep their label as plain text.
    expect(parseInline('[click](javascript:alert(1)) [img](data:text/html,x) [rel](/etc/passwd)')).toEqual([
      { kind: 'text', text: 'click' },
      { kind: 'text', text: ' ' },
      { kind: 'text', text: 'img' },
      { kind: 'text', text: ' ' },
      { kind: 'text', text: 'rel' }
    ])
    expect(safeHref('JAVASCRIPT:alert(1)')).toBeNull()
    expect(safeHref('mailto:a@b.c')).toBe('mailto:a@b.c')
  })

  it('keeps HTML as text (it is never interpreted)', () => {
    expect(parseInline('<img src=x onerror=alert(1)> <b>bold</b>')).toEqual([{ kind: 'text', text: '<img src=x onerror=alert(1)> <b>bold</b>' }])
  })
})
