/**
 * @file The main journey in browser mode against the real engine and a real SQLite file: create a chat, watch
 * the reply stream in, stop a long reply, regenerate, edit and resend, reload and find everything, search,
 * rename, delete with undo, branch from a reply. The tests run in order and share one server (see global-setup.ts).
 */
import type { Route } from '@playwright/test'
import { expect, test } from './fixtures'
import {
  chooseModel,
  composer,
  conversationButton,
  FAST_MODEL,
  LONG_MODEL,
  openApp,
  recordedGrowth,
  recordGrowth,
  replies,
  saveScreenshot,
  sendMessage,
  setChatSampling,
  userMessages,
  waitForReplyEnd
} from './helpers'

test.describe.configure({ mode: 'serial' })

const FIRST_PROMPT = 'Once upon a time'
/** The edited message; its last word is one no story model writes, so content search finds only it. */
const EDITED = 'The bird Quillonax'
/** Tokens of the first reply (and of its regenerations and edits): about 2 s of streaming at the server's pace. */
const REPLY_TOKENS = 100

/** The stats line: "TTFT 12 ms · 850 tok/s · CPU". */
const STATS_LINE = /^TTFT \d+(\.\d+)? (ms|s) · [\d.]+ tok\/s · CPU/

test('a new chat shows the model in use and the shortcuts', async ({ page }) => {
  await openApp(page)
  await expect(page.getByRole('heading', { name: 'Start a conversation' })).toBeVisible()
  await expect(page.getByRole('list', { name: 'Keyboard shortcuts' })).toBeVisible()
  await expect(page.getByRole('heading', { level: 1, name: 'New chat' })).toBeVisible()
  await chooseModel(page, FAST_MODEL)
  await expect(page.getByText(`Replies come from ${FAST_MODEL}`)).toBeVisible()
})

test('creates a conversation and streams the reply in steps', async ({ page }, testInfo) => {
  await openApp(page)
  // The model that never ends a story on its own, greedy, 100 tokens: with the server's delay before each
  // token (global setup) the reply streams for at least 99 × E2E_TOKEN_DELAY_MS (env.ts) ≈ 2 s whatever the machine's
  // speed, so the page renders it growing over many frames; unpaced it could arrive within one render.
  await chooseModel(page, LONG_MODEL)
  await setChatSampling(page, { temperature: 0, maxTokens: REPLY_TOKENS })
  await recordGrowth(page)
  await sendMessage(page, FIRST_PROMPT)
  await expect(composer(page)).toHaveValue('')
  await expect(userMessages(page).first()).toHaveText(FIRST_PROMPT)

  expect(await waitForReplyEnd(replies(page).last())).toBe('complete')
  const lengths = await recordedGrowth(page)
  testInfo.annotations.push({ type: 'stream steps', description: `${lengths.length} (lengths ${lengths.slice(0, 8).join(', ')}…)` })
  // Text grew in at least two observed steps before the reply completed.
  expect(lengths.length).toBeGreaterThanOrEqual(2)
  expect(lengths).toEqual([...lengths].sort((a, b) => a - b))
  const reply = replies(page).last()
  const finalText = (await reply.locator('.reply-text').textContent()) ?? ''
  expect(finalText.length).toBeGreaterThan(lengths[0] ?? 0)
  await expect(reply.locator('.message-meta')).toHaveText(STATS_LINE)

  // Saved as a conversation titled by its first message, shown first in the sidebar and in the header.
  await expect(page).toHaveURL(/#\/c\/[\w-]+$/)
  await expect(conversationButton(page, FIRST_PROMPT)).toBeVisible()
  await expect(page.getByRole('heading', { level: 1, name: FIRST_PROMPT })).toBeVisible()
  await saveScreenshot(page, testInfo, 'chat-1280x800')
})

test('Stop (button and Esc) ends a long reply mid-stream and keeps its text', async ({ page }) => {
  await openApp(page)
  await page.getByRole('button', { name: 'New chat' }).click()
  await chooseModel(page, LONG_MODEL)
  // 2000 tokens of a model that never ends a story itself stream for at least 1999 × E2E_TOKEN_DELAY_MS (env.ts) ≈ 40 s
  // on any machine, while Stop is pressed at most an expect timeout (15 s) after the first text shows: the
  // reply is provably still being written when it is stopped.
  await setChatSampling(page, { temperature: 0.8, maxTokens: 2000 })

  // Stop with the button.
  await sendMessage(page, 'The little dog')
  const first = replies(page).last()
  await expect(first.locator('.reply-text')).not.toBeEmpty()
  await page.getByRole('button', { name: 'Stop generating' }).click()
  expect(await waitForReplyEnd(first)).toBe('stopped')
  await expect(first.locator('.message-meta')).toContainText('Stopped')
  const stoppedText = (await first.locator('.reply-text').textContent()) ?? ''
  expect(stoppedText.length).toBeGreaterThan(0)
  await expect(page.getByRole('button', { name: 'Send message' })).toBeVisible()

  // Stop with Esc, from the composer.
  await sendMessage(page, 'The big cat')
  const second = replies(page).last()
  await expect(second.locator('.reply-text')).not.toBeEmpty()
  await composer(page).press('Escape')
  expect(await waitForReplyEnd(second)).toBe('stopped')
  await expect(replies(page)).toHaveCount(2)
  // The first stopped reply is still there, unchanged.
  await expect(replies(page).first().locator('.reply-text')).toHaveText(stoppedText)
})

test('copies a reply to the clipboard', async ({ page, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'])
  await openApp(page)
  await conversationButton(page, FIRST_PROMPT).click()
  const reply = replies(page).last()
  await reply.hover()
  await reply.getByRole('button', { name: 'Copy reply' }).click()
  await expect(reply.getByRole('status')).toHaveText('Copied')
  const copied: unknown = await page.evaluate('navigator.clipboard.readText()')
  const shown = (await reply.locator('.reply-text').textContent()) ?? ''
  expect(typeof copied).toBe('string')
  expect(String(copied).replace(/\s+/g, '')).toBe(shown.replace(/\s+/g, ''))
})

test('regenerates the last reply', async ({ page }) => {
  await openApp(page)
  await conversationButton(page, FIRST_PROMPT).click()
  await expect(replies(page)).toHaveCount(1)
  const before = await replies(page).last().getAttribute('data-message-id')
  await replies(page).last().hover()
  await page.getByRole('button', { name: 'Regenerate reply' }).click()
  const reply = replies(page).last()
  expect(await waitForReplyEnd(reply)).toBe('complete')
  await expect(replies(page)).toHaveCount(1)
  expect(await reply.getAttribute('data-message-id')).not.toBe(before)
  await expect(reply.locator('.message-meta')).toHaveText(STATS_LINE)
})

test('edit and resend replaces the message and the reply', async ({ page }) => {
  await openApp(page)
  await conversationButton(page, FIRST_PROMPT).click()
  await sendMessage(page, 'The cat')
  await waitForReplyEnd(replies(page).last())
  await expect(userMessages(page)).toHaveCount(2)

  await userMessages(page).last().hover()
  await page.getByRole('button', { name: 'Edit and resend' }).last().click()
  const editor = page.getByRole('textbox', { name: 'Edit message' })
  await editor.fill(EDITED)
  await page.getByRole('button', { name: 'Save and send' }).click()
  expect(await waitForReplyEnd(replies(page).last())).toBe('complete')
  await expect(userMessages(page)).toHaveCount(2)
  await expect(userMessages(page).last()).toHaveText(EDITED)
  await expect(replies(page)).toHaveCount(2)
})

test('after a reload the conversation and its messages are intact', async ({ page }) => {
  await openApp(page)
  await conversationButton(page, FIRST_PROMPT).click()
  await expect(replies(page)).toHaveCount(2)
  const texts = await page.getByRole('article').allTextContents()
  const url = page.url()
  await page.reload()
  await expect(page).toHaveURL(url)
  await expect(replies(page)).toHaveCount(2)
  expect(await page.getByRole('article').allTextContents()).toEqual(texts)
  await expect(conversationButton(page, FIRST_PROMPT)).toBeVisible()
  await expect(conversationButton(page, FIRST_PROMPT)).toHaveAttribute('aria-current', 'page')
})

test('the system prompt and sampling are saved with the conversation', async ({ page }) => {
  await openApp(page)
  await conversationButton(page, FIRST_PROMPT).click()
  await page.getByRole('button', { name: 'Chat settings' }).click()
  let dialog = page.getByRole('dialog', { name: 'Chat settings' })
  await dialog.getByRole('textbox', { name: 'System prompt' }).fill('You tell short stories for children.')
  await dialog.getByLabel('Top-p').fill('0.8')
  await dialog.getByLabel('Max tokens').fill('99999')
  await dialog.getByRole('button', { name: 'Save' }).click()
  // Out of range: says which field and keeps the dialog (and what was typed) open.
  await expect(dialog.getByRole('alert')).toContainText('Max tokens must be a whole number')
  await dialog.getByLabel('Max tokens').fill('150')
  await dialog.getByRole('button', { name: 'Save' }).click()
  await expect(dialog).toBeHidden()

  await page.reload()
  await expect(replies(page).first()).toBeVisible()
  await page.getByRole('button', { name: 'Chat settings' }).click()
  dialog = page.getByRole('dialog', { name: 'Chat settings' })
  await expect(dialog.getByRole('textbox', { name: 'System prompt' })).toHaveValue('You tell short stories for children.')
  await expect(dialog.getByLabel('Top-p')).toHaveValue('0.8')
  await expect(dialog.getByLabel('Max tokens')).toHaveValue('150')
  await expect(dialog.getByLabel('Temperature')).toHaveValue('0')
  await page.keyboard.press('Escape')
  await expect(dialog).toBeHidden()
})

test('search finds conversations by title and by content (Ctrl+K)', async ({ page }) => {
  await openApp(page)
  await page.getByRole('button', { name: 'New chat' }).click()
  await page.keyboard.press('Control+k')
  const search = page.getByRole('searchbox', { name: 'Search conversations' })
  await expect(search).toBeFocused()

  await search.fill('upon')
  const results = page.getByRole('navigation', { name: 'Search results' })
  await expect(results.getByRole('button', { name: new RegExp(FIRST_PROMPT) }).first()).toBeVisible()

  // A word from the edited message's content, which is not in any title.
  await search.fill('quillonax')
  const hit = results.getByRole('button').filter({ hasText: 'Quillonax' })
  await expect(hit).toBeVisible()
  await hit.click()
  await expect(page.getByRole('heading', { level: 1, name: FIRST_PROMPT })).toBeVisible()
  await expect(userMessages(page).filter({ hasText: EDITED })).toBeVisible()

  await search.fill('zzqxjv')
  await expect(page.getByText('No conversations match “zzqxjv”.')).toBeVisible()
  await search.press('Escape')
  await expect(search).toHaveValue('')
})

test('renames, then deletes with Undo, then deletes for good', async ({ page }) => {
  await openApp(page)
  // Rename the conversation while its details are still on their way (held here, so the order is chosen, not
  // timed): the answer read before the rename must not bring the old title back into the header.
  const held: Route[] = []
  let holding = true
  await page.route('**/api/conversations/get', async (route) => {
    if (holding) held.push(route)
    else await route.continue()
  })
  await conversationButton(page, FIRST_PROMPT).click()
  await expect.poll(() => held.length).toBe(1)
  await page.getByRole('button', { name: `Rename ${FIRST_PROMPT}` }).click()
  const field = page.getByRole('textbox', { name: 'Conversation title' })
  await field.fill('Stories')
  await field.press('Enter')
  await expect(conversationButton(page, 'Stories')).toBeVisible()
  // the chat reads the renamed conversation again, superseding the read in flight
  await expect.poll(() => held.length).toBe(2)
  holding = false
  for (const route of held) await route.continue()
  await page.unroute('**/api/conversations/get')
  await expect(page.getByRole('heading', { level: 1, name: 'Stories' })).toBeVisible()

  await page.getByRole('button', { name: 'Delete Stories' }).click()
  await expect(conversationButton(page, 'Stories')).toHaveCount(0)
  await expect(page.getByRole('heading', { level: 1, name: 'New chat' })).toBeVisible()
  await page.getByRole('region', { name: 'Notifications' }).getByRole('button', { name: 'Undo' }).click()
  await expect(conversationButton(page, 'Stories')).toBeVisible()
  await expect(page.getByRole('heading', { level: 1, name: 'Stories' })).toBeVisible()
  await expect(replies(page)).toHaveCount(2)

  await page.getByRole('button', { name: 'Delete Stories' }).click()
  await expect(conversationButton(page, 'Stories')).toHaveCount(0)
  await page.reload()
  await expect(page.getByRole('button', { name: 'New chat' })).toBeVisible()
  await expect(conversationButton(page, 'Stories')).toHaveCount(0)
})

test('keyboard: Shift+Enter adds a line, Enter sends, Ctrl+N starts a new chat', async ({ page }) => {
  await openApp(page)
  await chooseModel(page, FAST_MODEL)
  const box = composer(page)
  await box.click()
  await box.pressSequentially('One day')
  await box.press('Shift+Enter')
  await box.pressSequentially('a frog')
  await expect(box).toHaveValue('One day\na frog')
  await box.press('Enter')
  await expect(userMessages(page).first()).toHaveText('One day\na frog')
  await waitForReplyEnd(replies(page).last())

  await page.keyboard.press('Control+n')
  await expect(page.getByRole('heading', { level: 1, name: 'New chat' })).toBeVisible()
  await expect(box).toBeFocused()
  await expect(page.getByRole('article')).toHaveCount(0)
})

test('branches from a reply: a new conversation with the messages up to it, listed under its parent', async ({ page }) => {
  await openApp(page)
  await chooseModel(page, FAST_MODEL)
  // short replies: the server paces every token, and this test is about the conversations, not the text
  await setChatSampling(page, { temperature: 0, maxTokens: 12 })
  await sendMessage(page, 'The dog')
  await waitForReplyEnd(replies(page).last())
  await sendMessage(page, 'The cat')
  await waitForReplyEnd(replies(page).last())
  await expect(conversationButton(page, 'The dog')).toBeVisible()
  const firstReply = await replies(page).first().textContent()

  await replies(page).first().hover()
  await replies(page).first().getByRole('button', { name: 'Branch from here' }).click()
  await expect(page.getByRole('heading', { level: 1, name: 'The dog (branch)' })).toBeVisible()
  await expect(userMessages(page)).toHaveCount(1)
  await expect(replies(page)).toHaveCount(1)
  expect(await replies(page).first().textContent()).toBe(firstReply)
  // listed right under its parent, marked as a branch
  const list = page.getByRole('navigation', { name: 'Conversation list' })
  const items = list.getByRole('listitem')
  const titles = await items.allTextContents()
  const parentAt = titles.indexOf('The dog')
  expect(parentAt).toBeGreaterThanOrEqual(0)
  expect(titles[parentAt + 1]).toBe('Branch: The dog (branch)')
  await expect(conversationButton(page, 'Branch: The dog (branch)')).toHaveAttribute('aria-current', 'page')

  // the branch goes on by itself; the parent keeps its four messages
  await sendMessage(page, 'The bird')
  expect(await waitForReplyEnd(replies(page).last())).toBe('complete')
  await expect(userMessages(page)).toHaveCount(2)
  await conversationButton(page, 'The dog').click()
  await expect(userMessages(page)).toHaveCount(2)
  await expect(userMessages(page).last()).toHaveText('The cat')
})
