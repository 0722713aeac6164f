/**
 * @file Markdown rendering in the browser. The tiny test models do not write Markdown, so after a real reply
 * the test rewrites that reply's stored text in the SQLite file (as a model could have produced it) and
 * reloads: headings, lists, tables, code blocks with Copy, safe links, and hostile HTML that must stay text.
 */
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { expect, test } from './fixtures'
import { e2eEnv, E2E_ENV } from './env'
import { chooseModel, FAST_MODEL, openApp, replies, saveScreenshot, sendMessage, setChatSampling, waitForReplyEnd } from './helpers'

const CODE = 'const total = items.reduce((sum, x) => sum + x, 0)\nconsole.log(`total: ${total}`)'

const REPLY = [
  '# Plan for the day',
  '',
  'Here is **bold**, *italic*, `inline code` and a [safe link](https://example.com/docs).',
  'A [bad link](javascript:alert(1)) stays text, and so does <img src=x onerror="window.__pwned=1">.',
  '',
  '1. Wake up',
  '2. Write code',
  '   - with tests',
  '',
  '```ts',
  CODE,
  '```',
  '',
  '| Step | Minutes |',
  '|:-----|--------:|',
  '| Tea  | 5       |',
  '',
  '> Quoted wisdom.'
].join('\n')

test('replies render Markdown safely, with a copy button on code blocks', async ({ page, context }, testInfo) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'])
  await openApp(page)
  await chooseModel(page, FAST_MODEL)
  await setChatSampling(page, { temperature: 0, maxTokens: 16 })
  await sendMessage(page, 'Make a plan')
  const reply = replies(page).last()
  await waitForReplyEnd(reply)
  const messageId = await reply.getAttribute('data-message-id')
  expect(messageId).not.toBeNull()

  const db = new Database(join(e2eEnv(E2E_ENV.dataDir), 'tandem.db'))
  try {
    db.pragma('busy_timeout = 5000')
    const changed = db.prepare('UPDATE messages SET content = ? WHERE id = ?').run(REPLY, messageId).changes
    expect(changed).toBe(1)
  } finally {
    db.close()
  }
  await page.reload()

  const body = replies(page).last().locator('.reply-text')
  await expect(body.getByRole('heading', { level: 3, name: 'Plan for the day' })).toBeVisible()
  await expect(body.locator('strong')).toHaveText('bold')
  await expect(body.locator('em')).toHaveText('italic')
  await expect(body.locator('p code')).toHaveText('inline code')
  const link = body.getByRole('link', { name: 'safe link' })
  await expect(link).toHaveAttribute('href', 'https://example.com/docs')
  await expect(link).toHaveAttribute('target', '_blank')
  await expect(link).toHaveAttribute('rel', 'noopener noreferrer')
  // Unsafe link: label only. Raw HTML: shown as text, never an element.
  await expect(body.getByRole('link')).toHaveCount(1)
  await expect(body).toContainText('bad link stays text')
  await expect(body).toContainText('<img src=x onerror="window.__pwned=1">')
  await expect(body.locator('img')).toHaveCount(0)
  expect(await page.evaluate('window.__pwned')).toBeUndefined()

  await expect(body.locator('ol > li')).toHaveCount(2)
  await expect(body.locator('ol ul > li')).toHaveText('with tests')
  await expect(body.getByRole('table')).toContainText('Minutes')
  await expect(body.locator('td.align-right')).toHaveText('5')
  await expect(body.locator('blockquote')).toHaveText('Quoted wisdom.')

  const code = body.locator('pre code')
  await expect(code).toHaveText(CODE)
  await body.getByRole('button', { name: 'Copy ts' }).click()
  await expect(body.getByRole('button', { name: 'Copy ts' })).toHaveText('Copied')
  expect(await page.evaluate('navigator.clipboard.readText()')).toBe(CODE)
  await page.mouse.move(0, 0)
  await saveScreenshot(page, testInfo, 'markdown-1280x800')
})
