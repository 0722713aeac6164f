/**
 * @file Summarizing local files (issue #15) in browser mode against the real engine: a multi-page PDF picked with
 * "Summarize a file…" shows the map-reduce progress advancing and its summary streaming in, with the file's card,
 * then answers a follow-up; the same file again offers the stored summary, "Summarize again" runs anew and Cancel
 * stops it; a dropped file is summarized; a binary or too large file is refused with a clear message and the app
 * stays usable. The tiny test model writes poor summaries, so the tests check the pipeline (progress, states,
 * non-empty text), never the prose; the server paces tokens (env.ts), so nothing depends on the machine's speed.
 */
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from '@playwright/test'
import { API_LIMITS } from '../../preload/api'
import { writePdf, type PdfPage } from '../fixtures/pdf-writer'
import { expect, test } from './fixtures'
import {
  callApi,
  composer,
  conversationButton,
  expectNoViolations,
  FAST_MODEL,
  openApp,
  recordedGrowth,
  recordGrowth,
  replies,
  saveScreenshot,
  sendMessage,
  setChatSampling,
  userMessages,
  waitForReplyEnd,
  withRequest
} from './helpers'

test.describe.configure({ mode: 'serial' })

/** How long a whole summary may take on a slow, busy machine (ms): ~10 paced model calls of the small model. */
const SUMMARY_TIMEOUT_MS = 180_000

const NAMES = ['Lily', 'Tom', 'Max', 'Sue', 'Ben', 'Mia', 'Sam', 'Zoe']
const THINGS = ['a red ball', 'a big tree', 'a small boat', 'a blue bird', 'a shiny key', 'a warm cake', 'a lost cat', 'a tall hill']

/**
 * A newsletter of `pageCount` pages: each page the same running header (the extractor drops it) and eight lines of
 * distinct text. At the e2e model's 512-token context, 12 pages are several map steps.
 */
function newsletter(pageCount: number, title: string): PdfPage[] {
  return Array.from({ length: pageCount }, (_, p) => [
    title,
    ...Array.from({ length: 8 }, (__, i) => {
      const who = NAMES[(p + i) % NAMES.length] ?? 'Lily'
      const what = THINGS[(p * 3 + i) % THINGS.length] ?? 'a ball'
      return `${who} found ${what} on day ${p * 8 + i + 1} and told everyone in town about it.`
    })
  ])
}

/** Files written to a temporary folder for the tests. */
const files = { dir: '', report: '', binary: '', tooLarge: '' }
/** The default model before these tests, put back after them. */
let originalDefault: string | null = null

test.beforeAll(async ({ playwright }) => {
  files.dir = mkdtempSync(join(tmpdir(), 'tandem-e2e-summaries-'))
  files.report = join(files.dir, 'report.pdf')
  writeFileSync(files.report, writePdf(newsletter(12, 'Garden Club Newsletter')))
  // text by its name, binary by its bytes: the app must refuse it
  files.binary = join(files.dir, 'data.txt')
  writeFileSync(files.binary, new Uint8Array([0x48, 0x69, 0x00, 0x01, 0x02, 0xff, 0x00, 0x10, 0x20, 0x00]))
  // sparse: one byte over the limit costs nothing on disk, and the page must refuse it without reading it
  files.tooLarge = join(files.dir, 'huge.pdf')
  writeFileSync(files.tooLarge, '')
  truncateSync(files.tooLarge, API_LIMITS.maxDocumentBytes + 1)

  // A summary runs on the default model: the fast 512-token checkpoint, so a 12-page file takes several steps.
  await withRequest(playwright, async (request) => {
    const settings = await callApi(request, 'settings/get', [])
    const current = typeof settings === 'object' && settings !== null && 'defaultModelId' in settings ? settings.defaultModelId : null
    originalDefault = typeof current === 'string' ? current : null
    const models = await callApi(request, 'models/list', [])
    const fast = Array.isArray(models) ? models.find((m: unknown) => typeof m === 'object' && m !== null && 'name' in m && m.name === FAST_MODEL) : undefined
    const id: unknown = typeof fast === 'object' && fast !== null && 'id' in fast ? fast.id : null
    if (typeof id !== 'string') throw new Error(`${FAST_MODEL} is not in the model list`)
    await callApi(request, 'settings/update', [{ defaultModelId: id }])
  })
})

test.afterAll(async ({ playwright }) => {
  if (files.dir !== '') rmSync(files.dir, { recursive: true, force: true })
  if (originalDefault !== null) {
    const id = originalDefault
    await withRequest(playwright, (request) => callApi(request, 'settings/update', [{ defaultModelId: id }]))
  }
})

/**
 * In-page recorder of the summary's progress bar: a MutationObserver notes every distinct "done/total" it shows
 * (passive, like the growth recorder in helpers.ts; a string, since the test project has no DOM types).
 */
const PROGRESS_RECORDER = `(() => {
  const seen = []
  window.__tandemProgress = seen
  const record = () => {
    const bar = document.querySelector('.summary-progress progress')
    if (bar === null || !bar.hasAttribute('value')) return
    const entry = bar.getAttribute('value') + '/' + bar.getAttribute('max')
    if (seen[seen.length - 1] !== entry) seen.push(entry)
  }
  new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true })
})()`

/** Starts recording the progress bar's values. */
async function recordProgress(page: Page): Promise<void> {
  await page.evaluate(PROGRESS_RECORDER)
}

/** The progress values recorded, in order, as { done, total }. */
async function recordedProgress(page: Page): Promise<{ done: number; total: number }[]> {
  const value: unknown = await page.evaluate('window.__tandemProgress')
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new Error('progress recorder not installed')
  return value.map((v: string) => {
    const [done, total] = v.split('/').map(Number)
    return { done: done ?? NaN, total: total ?? NaN }
  })
}

/** The running summary's progress bar (its name is "Summarizing <file>"). */
function progressBar(page: Page, fileName: string): ReturnType<Page['getByRole']> {
  return page.getByRole('progressbar', { name: `Summarizing ${fileName}` })
}

/** True when the page is no wider than the window (no sideways scrolling). */
async function fitsWidth(page: Page): Promise<boolean> {
  const fits: unknown = await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')
  return fits === true
}

/** The summary written by the first test, and its conversation's address. */
let firstSummary = ''
let firstUrl = ''

test('summarizes a 12-page PDF picked with "Summarize a file…": progress advances, the summary streams in, a follow-up is answered', async ({ page }, testInfo) => {
  test.setTimeout(SUMMARY_TIMEOUT_MS + 120_000)
  await openApp(page)
  await recordProgress(page)
  await recordGrowth(page)
  const chooser = page.waitForEvent('filechooser')
  await page.getByRole('button', { name: 'Summarize a file…' }).click()
  await (await chooser).setFiles(files.report)

  // the conversation opens at once, named after the file, with the request as its first message
  await expect(userMessages(page).first()).toHaveText('Summarize report.pdf')
  await expect(page).toHaveURL(/#\/c\/[\w-]+$/)
  await expect(conversationButton(page, 'report.pdf')).toBeVisible()
  const card = page.getByRole('region', { name: 'Summarized file' })
  await expect(card).toContainText('report.pdf')
  await expect(card).toContainText('PDF')
  await expect(progressBar(page, 'report.pdf')).toHaveAttribute('value', /^\d+$/, { timeout: 60_000 })
  await expect(page.getByRole('button', { name: 'Cancel', exact: true })).toBeVisible()
  await saveScreenshot(page, testInfo, 'summary-progress-1280x800')

  const reply = replies(page).last()
  expect(await waitForReplyEnd(reply, SUMMARY_TIMEOUT_MS)).toBe('complete')
  await expect(progressBar(page, 'report.pdf')).toHaveCount(0)
  firstSummary = ((await reply.locator('.reply-text').textContent()) ?? '').trim()
  expect(firstSummary.length).toBeGreaterThan(0)
  firstUrl = page.url()

  // the bar counted the map-reduce steps: several of them, and it moved forward
  const progress = await recordedProgress(page)
  const growth = await recordedGrowth(page)
  testInfo.annotations.push({ type: 'progress', description: progress.map((p) => `${p.done}/${p.total}`).join(', ') })
  testInfo.annotations.push({ type: 'summary stream steps', description: String(growth.length) })
  expect(progress.length).toBeGreaterThanOrEqual(2)
  expect(Math.max(...progress.map((p) => p.total))).toBeGreaterThanOrEqual(3)
  const dones = progress.map((p) => p.done)
  expect(dones).toEqual([...dones].sort((a, b) => a - b))
  expect(Math.max(...dones)).toBeGreaterThan(Math.min(...dones))

  // a follow-up question is an ordinary message in this conversation
  await expect(composer(page)).toHaveAttribute('placeholder', 'Ask about report.pdf…')
  await sendMessage(page, 'Who found the red ball?')
  await expect(replies(page)).toHaveCount(2)
  expect(await waitForReplyEnd(replies(page).last(), 60_000)).toBe('complete')
  expect(((await replies(page).last().locator('.reply-text').textContent()) ?? '').trim().length).toBeGreaterThan(0)
  await expect(card).toBeVisible()

  // narrow window, light and dark: the card and the messages fit
  await page.setViewportSize({ width: 400, height: 800 })
  await expect(card).toBeVisible()
  expect(await fitsWidth(page)).toBe(true)
  await saveScreenshot(page, testInfo, 'summary-400x800')
  await page.emulateMedia({ colorScheme: 'dark' })
  await saveScreenshot(page, testInfo, 'summary-400x800-dark')
})

test('the same file again offers the stored summary; "Summarize again" runs anew and Cancel stops it', async ({ page }, testInfo) => {
  test.setTimeout(SUMMARY_TIMEOUT_MS + 60_000)
  expect(firstUrl, 'needs the first test').not.toBe('')
  await openApp(page)
  await recordProgress(page)
  await page.locator('input[type="file"]').setInputFiles(files.report)

  // answered at once with the stored summary's conversation: no new progress
  await expect(page.getByText('report.pdf was summarized before; this is the stored summary.')).toBeVisible()
  await expect(page).toHaveURL(firstUrl)
  await saveScreenshot(page, testInfo, 'summary-reused-1280x800')
  await expectNoViolations(page, 'a summarized file with the stored-summary notice')
  await expect(replies(page).first().locator('.reply-text')).toHaveText(firstSummary)
  await expect(page.getByRole('progressbar')).toHaveCount(0)
  expect(await recordedProgress(page)).toEqual([])

  // Summarize again: a new conversation, its progress bar, and Cancel once the steps are counted
  await page.getByRole('button', { name: 'Summarize again' }).click()
  const bar = progressBar(page, 'report.pdf')
  await expect(bar).toHaveAttribute('value', /^\d+$/, { timeout: 60_000 })
  await expect(page).not.toHaveURL(firstUrl)
  await page.getByRole('button', { name: 'Cancel', exact: true }).click()

  const reply = replies(page).last()
  expect(await waitForReplyEnd(reply)).toBe('stopped')
  await expect(reply.locator('.message-meta')).toContainText('Stopped')
  await expect(bar).toHaveCount(0)
  await expect(page.getByRole('alert')).toHaveCount(0)

  // the app is ready: a message in the same conversation gets a reply
  await expect(page.getByRole('button', { name: 'Send message' })).toBeVisible()
  await sendMessage(page, 'Tell me about the garden club.')
  await expect(replies(page)).toHaveCount(2)
  expect(await waitForReplyEnd(replies(page).last(), 60_000)).toBe('complete')
})

test('a file dropped on the window is summarized; of several, only the first', async ({ page }) => {
  test.setTimeout(SUMMARY_TIMEOUT_MS)
  await openApp(page)
  const notes = '# Picnic notes\n\nLily and Tom packed a basket with bread, apples and a warm cake. They walked to the tall hill.\n\nMax the dog chased a blue bird all afternoon.\n'
  // A real drag cannot be scripted across the OS; these are the events a drop of two files fires on the page.
  await page.evaluate(`(() => {
    const files = new DataTransfer()
    files.items.add(new File([${JSON.stringify(notes)}], 'picnic.md', { type: 'text/markdown' }))
    files.items.add(new File(['Another file.'], 'second.txt', { type: 'text/plain' }))
    window.__tandemDrop = files
    document.body.dispatchEvent(new DragEvent('dragenter', { bubbles: true, cancelable: true, dataTransfer: files }))
    document.body.dispatchEvent(new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer: files }))
  })()`)
  await expect(page.getByText('Drop a file to summarize it')).toBeVisible()
  await page.evaluate(`document.body.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: window.__tandemDrop }))`)
  await expect(page.getByText('Drop a file to summarize it')).toBeHidden()
  await expect(page.getByRole('region', { name: 'Notifications' })).toContainText('second.txt was not summarized')

  await expect(userMessages(page).first()).toHaveText('Summarize picnic.md')
  const card = page.getByRole('region', { name: 'Summarized file' })
  await expect(card).toContainText('picnic.md')
  await expect(card).toContainText('Markdown')
  const reply = replies(page).last()
  expect(await waitForReplyEnd(reply, SUMMARY_TIMEOUT_MS)).toBe('complete')
  expect(((await reply.locator('.reply-text').textContent()) ?? '').trim().length).toBeGreaterThan(0)
})

test('a binary file and a file over the limit are refused with a clear message; the app stays usable', async ({ page }) => {
  await openApp(page)
  let summaryCalls = 0
  page.on('request', (request) => {
    if (request.url().endsWith('/api/summaries/start')) summaryCalls++
  })
  const input = page.locator('input[type="file"]')

  // over the limit: refused in the page, before the file is read or sent
  await input.setInputFiles(files.tooLarge)
  let alert = page.getByRole('alert')
  await expect(alert).toContainText('This file is too large')
  await expect(alert).toContainText('huge.pdf is 67 MB; files up to 64 MiB can be summarized.')
  expect(summaryCalls).toBe(0)
  await alert.getByRole('button', { name: 'Dismiss error' }).click()

  // text by name, binary inside: the app's own message
  await input.setInputFiles(files.binary)
  alert = page.getByRole('alert')
  await expect(alert).toContainText('This file cannot be summarized')
  await expect(alert).toContainText('data.txt is not a text file')
  expect(summaryCalls).toBe(1)
  await expect(page.getByRole('progressbar')).toHaveCount(0)
  await expect(conversationButton(page, 'data.txt')).toHaveCount(0)

  // still usable: a new chat answers
  await page.getByRole('button', { name: 'New chat' }).click()
  await setChatSampling(page, { temperature: 0, maxTokens: 24 })
  await sendMessage(page, 'Once upon a time')
  expect(await waitForReplyEnd(replies(page).last(), 60_000)).toBe('complete')
})
