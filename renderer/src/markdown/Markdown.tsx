/**
 * @file Renders Markdown as React elements. Model output is only ever text content: no
 * dangerouslySetInnerHTML, no raw HTML passthrough, and links only for http(s)/mailto (opened outside the app).
 */
import { memo, useMemo, type JSX, type ReactNode } from 'react'
import { parseBlocks, type Block } from './blocks'
import { CodeBlock } from './CodeBlock'
import { parseInline, type Inline } from './inline'

/** Markdown levels 1–6 as page headings: a reply's "#" is an h3 (the page uses h1 and h2). */
const HEADING_TAGS = ['h3', 'h4', 'h5', 'h6', 'h6', 'h6'] as const

function renderInline(nodes: readonly Inline[]): ReactNode[] {
  return nodes.map((node, k) => {
    switch (node.kind) {
      case 'text':
        return node.text
      case 'code':
        return <code key={k}>{node.text}</code>
      case 'strong':
        return <strong key={k}>{renderInline(node.children)}</strong>
      case 'em':
        return <em key={k}>{renderInline(node.children)}</em>
      case 'del':
        return <del key={k}>{renderInline(node.children)}</del>
      case 'break':
        return <br key={k} />
      case 'link':
        return (
          <a key={k} href={node.href} target="_blank" rel="noopener noreferrer">
            {renderInline(node.children)}
          </a>
        )
    }
  })
}

const inline = (text: string): ReactNode[] => renderInline(parseInline(text))

function renderBlock(block: Block, key: number): ReactNode {
  switch (block.kind) {
    case 'heading': {
      // Headings inside a reply sit below the page's own h1/h2, so they start at h3.
      const Tag = HEADING_TAGS[Math.min(block.level, HEADING_TAGS.length) - 1] ?? 'h6'
      return <Tag key={key}>{inline(block.text)}</Tag>
    }
    case 'paragraph':
      return <p key={key}>{inline(block.text)}</p>
    case 'code':
      return <CodeBlock key={key} lang={block.lang} code={block.code} />
    case 'rule':
      return <hr key={key} />
    case 'quote':
      return <blockquote key={key}>{block.blocks.map(renderBlock)}</blockquote>
    case 'list': {
      const items = block.items.map((item, k) => <li key={k}>{renderListItem(item)}</li>)
      return block.ordered ? (
        <ol key={key} start={block.start === 1 ? undefined : block.start}>
          {items}
        </ol>
      ) : (
        <ul key={key}>{items}</ul>
      )
    }
    case 'table':
      return (
        <div key={key} className="table-scroll">
          <table>
            <thead>
              <tr>
                {block.header.map((cell, c) => (
                  <th key={c} className={alignClass(block.align[c])}>
                    {inline(cell)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {block.rows.map((row, r) => (
                <tr key={r}>
                  {block.header.map((_, c) => (
                    <td key={c} className={alignClass(block.align[c])}>
                      {inline(row[c] ?? '')}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )
  }
}

const alignClass = (align: string | null | undefined): string | undefined =>
  align === null || align === undefined ? undefined : `align-${align}`

/** A tight list item (one paragraph) renders its text without a <p>, like most chat UIs. */
function renderListItem(blocks: readonly Block[]): ReactNode {
  const [first, ...rest] = blocks
  if (first?.kind === 'paragraph') return [<span key="p">{inline(first.text)}</span>, ...rest.map((b, k) => renderBlock(b, k + 1))]
  return blocks.map(renderBlock)
}

/** Markdown text rendered as React elements. */
export const Markdown = memo(function Markdown({ text }: { text: string }): JSX.Element {
  const blocks = useMemo(() => parseBlocks(text), [text])
  return <div className="markdown">{blocks.map(renderBlock)}</div>
})
