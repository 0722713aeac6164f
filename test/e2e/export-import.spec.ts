/**
 * @file Export and import of conversations (issue #16) in browser mode, against the real app: a conversation saved
 * from its header as Markdown and as JSON (real downloads of blob: URLs under the page's strict CSP, which the page
 * guard would report), the menu usable by keyboard, at 400 px and in light and dark; the JSON imported in Settings
 * after the conversation was deleted brings it back with its messages (a deleted conversation is not a duplicate:
 * the file's copy replaces it); importing again reports it as already here; a broken file imports nothing and says
 * why; "Export all conversations (JSON)" saves every conversation.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Download, Locator, Page } from '@playwright/test'
import { expect, test } from './fixtures'
import { chooseModel, conversationButton, expectNoViolations, FAST_MODEL, openApp, replies, saveScreenshot, sendMessage, setChatSampling, userMessages, waitForReplyEnd } from './helpers'

test.describe.configure({ mode: 'serial' })

/** This spec's conversation; a title no other spec uses, since all specs share one app and database. */
const PROMPT = 'Mia found a purple kite'

/** The files the tests save and pick. */
const files = { dir: '', json: '', broken: '' }
/** The reply as the page showed it before the export. */
let replyText = ''

test.beforeAll(() => {
  files.dir = mkdtempSync(join(tmpdir(), 'tandem-e2e-export-'))
  files.json = join(files.dir, 'exported.json')
  files.broken = join(files.dir, 'broken.json')
  writeFileSync(files.broken, '{"format": "tandem-conversations", "version": 1, "conversations": [')
})
test.afterAll(() => rmSync(files.dir, { recursive: true, force: true }))

/** Clicks `target` and returns the download it starts, with its content. */
async function download(page: Page, target: Locator): Promise<{ download: Download; text: string }> {
  const started = page.waitForEvent('download')
  await target.click()
  const d = await started
  const path = await d.path()
  return { download: d, text: readFileSync(path, 'utf8') }
}

/** Opens Settings on its General tab; returns the dialog. */
async function openSettings(page: Page): Promise<Locator> {
  await page.getByRole('button', { name: 'Settings', exact: true }).click()
  const dialog = page.getByRole('dialog', { name: 'Settings' })
  await expect(dialog).toBeVisible()
  await expect(dialog.getByRole('heading', { name: 'Conversations' })).toBeVisible()
  return dialog
}

/** Picks `file` with "Import conversations…". */
async function importFile(page: Page, dialog: Locator, file: string): Promise<void> {
  const chooser = page.waitForEvent('filechooser')
  await dialog.getByRole('button', { name: 'Import conversations…' }).click()
  await (await chooser).setFiles(file)
}

test('a conversation is saved from its header as Markdown and as JSON', async ({ page }, testInfo) => {
  await openApp(page)
  await page.getByRole('button', { name: 'New chat' }).first().click()
  await chooseModel(page, FAST_MODEL)
  await setChatSampling(page, { temperature: 0, maxTokens: 24 })
  await sendMessage(page, PROMPT)
  expect(await waitForReplyEnd(replies(page).last())).toBe('complete')
  replyText = ((await replies(page).last().locator('.reply-text').textContent()) ?? '').trim()
  expect(replyText.length).toBeGreaterThan(0)

  const toggle = page.getByRole('button', { name: 'Export conversation' })
  await toggle.click()
  await expect(toggle).toHaveAttribute('aria-expanded', 'true')
  const markdownChoice = page.getByRole('button', { name: /^Export as Markdown/ })
  await expect(markdownChoice).toBeFocused()
  await expectNoViolations(page, 'the export choices')
  await saveScreenshot(page, testInfo, 'export-choices-1280x800')

  const md = await download(page, markdownChoice)
  expect(md.download.suggestedFilename()).toBe(`${PROMPT}.md`)
  expect(md.text.startsWith(`# ${PROMPT}\n`)).toBe(true)
  expect(md.text).toContain(`### You\n\n${PROMPT}\n\n### Assistant\n\n`)
  expect(md.text).toMatch(/\n\*\d+ tokens · [\d.]+ tok\/s · first token after [\d.]+ m?s · stories260K\.bin on CPU[^*\n]*\*\n/)
  // choosing closed the choices and gave the focus back to the button
  await expect(toggle).toHaveAttribute('aria-expanded', 'false')
  await expect(toggle).toBeFocused()

  await toggle.click()
  const json = await download(page, page.getByRole('button', { name: /^Export as JSON/ }))
  expect(json.download.suggestedFilename()).toBe(`${PROMPT}.json`)
  const file = JSON.parse(json.text) as { format: string; version: number; conversations: { title: string; messages: { role: string; content: string; stats: { generatedTokens: number } | null }[] }[] }
  expect(file).toMatchObject({ format: 'tandem-conversations', version: 1 })
  expect(file.conversations).toHaveLength(1)
  expect(file.conversations[0]?.title).toBe(PROMPT)
  expect(file.conversations[0]?.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
  expect(file.conversations[0]?.messages[1]?.stats?.generatedTokens).toBeGreaterThan(0)
  writeFileSync(files.json, json.text)

  // Escape closes the choices (and stops nothing); a click elsewhere closes them too
  await toggle.click()
  await page.keyboard.press('Escape')
  await expect(page.getByRole('button', { name: /^Export as JSON/ })).toBeHidden()
  await expect(toggle).toBeFocused()
  await toggle.click()
  await page.getByRole('heading', { level: 1, name: PROMPT }).click()
  await expect(page.getByRole('button', { name: /^Export as JSON/ })).toBeHidden()
})

test('at 400 px the choices fit the window', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 400, height: 800 })
  await openApp(page)
  await page.getByRole('button', { name: 'Show conversations' }).click()
  await conversationButton(page, PROMPT).click()
  await expect(userMessages(page).first()).toHaveText(PROMPT)
  await page.getByRole('button', { name: 'Export conversation' }).click()
  for (const name of [/^Export as Markdown/, /^Export as JSON/]) {
    const box = await page.getByRole('button', { name }).boundingBox()
    expect(box).not.toBeNull()
    expect(box?.x ?? -1).toBeGreaterThanOrEqual(0)
    expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(400)
  }
  const fits: unknown = await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')
  expect(fits).toBe(true)
  await expectNoViolations(page, 'the export choices at 400 px')
  await page.emulateMedia({ colorScheme: 'dark' })
  await saveScreenshot(page, testInfo, 'export-choices-400x800-dark')
  await page.emulateMedia({ colorScheme: 'light' })
})

test('Settings imports the JSON back after the conversation was deleted; again, it is already here; a broken file imports nothing', async ({ page }, testInfo) => {
  await openApp(page)
  await page.getByRole('button', { name: `Delete ${PROMPT}` }).click()
  await expect(conversationButton(page, PROMPT)).toBeHidden()

  const dialog = await openSettings(page)
  await importFile(page, dialog, files.json)
  await expect(dialog.getByRole('status').filter({ hasText: 'Imported' })).toHaveText('Imported 1 conversation.')
  await importFile(page, dialog, files.json)
  await expect(dialog.getByRole('status').filter({ hasText: 'already here' })).toHaveText(`No conversations were imported; 1 was already here: “${PROMPT}”.`)
  await dialog.getByRole('heading', { name: 'Conversations' }).scrollIntoViewIfNeeded()
  await saveScreenshot(page, testInfo, 'settings-conversations-import')
  await importFile(page, dialog, files.broken)
  await expect(dialog.getByRole('alert')).toHaveText(/^Nothing was imported from broken\.json: The file is not valid JSON/)
  await expectNoViolations(page, 'Settings with an import refused')
  await dialog.getByRole('button', { name: 'Close' }).click()

  // listed again, with its messages as they were
  await conversationButton(page, PROMPT).click()
  await expect(userMessages(page)).toHaveText([PROMPT])
  await expect(replies(page).locator('.reply-text')).toHaveText([replyText])
})

test('"Export all conversations (JSON)" saves every conversation in one file', async ({ page }) => {
  await openApp(page)
  const dialog = await openSettings(page)
  const all = await download(page, dialog.getByRole('button', { name: 'Export all conversations (JSON)' }))
  expect(all.download.suggestedFilename()).toMatch(/^tandem-conversations-\d{4}-\d\d-\d\d\.json$/)
  const file = JSON.parse(all.text) as { format: string; conversations: { title: string }[] }
  expect(file.format).toBe('tandem-conversations')
  expect(file.conversations.map((c) => c.title)).toContain(PROMPT)
  await expect(dialog.getByRole('status').filter({ hasText: 'Saved' })).toHaveText(`Saved ${all.download.suggestedFilename()}.`)
})
