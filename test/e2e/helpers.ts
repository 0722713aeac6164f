/**
 * @file Page helpers for the end-to-end tests. Everything is found the way a person (or a screen reader)
 * finds it: by role and accessible name, so the tests also guard the UI's labels.
 */
import { AxeBuilder } from '@axe-core/playwright'
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { expect, type APIRequestContext, type Locator, type Page, type PlaywrightWorkerArgs, type TestInfo } from '@playwright/test'
import { e2eEnv, E2E_ENV } from './env'

/** Where screenshots are kept (gitignored; overwritten on every run). */
export const SCREENSHOT_DIR = resolve(import.meta.dirname, '..', '..', 'test-results', 'screenshots')

/** The fast llama2.c checkpoint (context 512, ends its stories on its own). */
export const FAST_MODEL = 'stories260K.bin'
/** The GGUF conversion (context 2048): with a large max tokens it writes for seconds, long enough to stop. */
export const LONG_MODEL = 'stories260K.gguf'

/** Opens the app from the launch URL (with its token) and waits until it is ready. */
export async function openApp(page: Page): Promise<void> {
  await page.goto(e2eEnv(E2E_ENV.url))
  await expect(composer(page)).toBeVisible()
  await expect(page.getByRole('combobox', { name: 'Model', exact: true })).toBeEnabled()
}

/** Picks a model in the header by (part of) its file name. */
export async function chooseModel(page: Page, fileName: string): Promise<void> {
  const picker = page.getByRole('combobox', { name: 'Model', exact: true })
  const option = picker.locator('option', { hasText: fileName })
  await expect(option).toHaveCount(1)
  const value = await option.getAttribute('value')
  if (value === null) throw new Error(`model option ${fileName} has no value`)
  await picker.selectOption(value)
  await expect(picker).toHaveValue(value)
}

/** The Settings dialog's tabs, by their labels. */
export type SettingsTabName = 'General' | 'Models' | 'Devices'

/** Opens Settings from the sidebar and shows one of its tabs; returns the dialog. */
export async function openSettingsTab(page: Page, tab: SettingsTabName): Promise<Locator> {
  await page.getByRole('button', { name: 'Settings', exact: true }).click()
  const dialog = page.getByRole('dialog', { name: 'Settings' })
  await expect(dialog).toBeVisible()
  await showSettingsTab(dialog, tab)
  return dialog
}

/** Shows one tab of the open Settings dialog (each tab's sections exist only while it is shown). */
export async function showSettingsTab(dialog: Locator, tab: SettingsTabName): Promise<void> {
  const button = dialog.getByRole('tab', { name: tab, exact: true })
  await button.click()
  await expect(button).toHaveAttribute('aria-selected', 'true')
}

/** Sets this chat's sampling in the Chat settings dialog. */
export async function setChatSampling(page: Page, sampling: { temperature?: number; maxTokens?: number }): Promise<void> {
  await page.getByRole('button', { name: 'Chat settings' }).click()
  const dialog = page.getByRole('dialog', { name: 'Chat settings' })
  await expect(dialog).toBeVisible()
  if (sampling.temperature !== undefined) await dialog.getByLabel('Temperature').fill(String(sampling.temperature))
  if (sampling.maxTokens !== undefined) await dialog.getByLabel('Max tokens').fill(String(sampling.maxTokens))
  await dialog.getByRole('button', { name: 'Save' }).click()
  await expect(dialog).toBeHidden()
}

/** The message box. */
export function composer(page: Page): Locator {
  return page.getByRole('textbox', { name: 'Message', exact: true })
}

/** Types a message and presses Enter. */
export async function sendMessage(page: Page, text: string): Promise<void> {
  await composer(page).fill(text)
  await composer(page).press('Enter')
}

/** All assistant replies, in order. */
export function replies(page: Page): Locator {
  return page.getByRole('article', { name: 'Assistant reply' })
}

/** All of the user's messages, in order. */
export function userMessages(page: Page): Locator {
  return page.getByRole('article', { name: 'Your message' })
}

/** Waits until a reply is no longer streaming; returns its final status. */
export async function waitForReplyEnd(reply: Locator, timeoutMs = 30_000): Promise<string> {
  await expect(reply).toHaveAttribute('data-status', /^(complete|stopped|error)$/, { timeout: timeoutMs })
  return (await reply.getAttribute('data-status')) ?? ''
}

/**
 * In-page recorder of how the streaming reply grows: a MutationObserver notes the reply's text length after
 * every DOM change while it is 'streaming'. Passive, so it does not slow the page down the way polling over
 * the DevTools protocol does (polling starved the engine on two cores). Written as a string because the
 * test project type-checks without DOM types.
 */
const GROWTH_RECORDER = `(() => {
  const lengths = []
  window.__tandemGrowth = lengths
  const record = () => {
    const all = document.querySelectorAll('article[aria-label="Assistant reply"]')
    const reply = all[all.length - 1]
    if (reply === undefined || reply.getAttribute('data-status') !== 'streaming') return
    const text = reply.querySelector('.reply-text')
    const n = text === null ? 0 : text.textContent.length
    if (n > 0 && n !== lengths[lengths.length - 1]) lengths.push(n)
  }
  new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true })
})()`

/** Starts recording the growth of the next streamed reply (call before sending). */
export async function recordGrowth(page: Page): Promise<void> {
  await page.evaluate(GROWTH_RECORDER)
}

/** The reply text lengths recorded while streaming, in order. */
export async function recordedGrowth(page: Page): Promise<number[]> {
  const value: unknown = await page.evaluate('window.__tandemGrowth')
  if (!Array.isArray(value) || !value.every((n) => typeof n === 'number')) throw new Error('growth recorder not installed')
  return value
}

/** The sidebar's conversation entries (select buttons), by title. */
export function conversationButton(page: Page, title: string | RegExp): Locator {
  const list = page.getByRole('navigation', { name: 'Conversation list' })
  return typeof title === 'string' ? list.getByRole('button', { name: title, exact: true }) : list.getByRole('button', { name: title }).first()
}

/** axe's tags for the WCAG 2.0, 2.1 and 2.2 success criteria at levels A and AA (as accessibility.spec.ts). */
const WCAG_A_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa']

/** Fails with every WCAG A/AA violation axe finds on the page as it is now, in light and in dark; light again after. */
export async function expectNoViolations(page: Page, view: string): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme, reducedMotion: 'reduce' })
    const results = await new AxeBuilder({ page }).withTags(WCAG_A_AA).analyze()
    const found = results.violations.map((v) => `${v.id}: ${v.help}\n${v.nodes.map((n) => `    ${n.target.join(' ')}`).join('\n')}`)
    expect(found, `axe violations in ${view}, ${colorScheme}`).toEqual([])
  }
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'no-preference' })
}

/** Saves a screenshot under test-results/screenshots and attaches it to the test report. */
export async function saveScreenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true })
  const path = join(SCREENSHOT_DIR, `${name}.png`)
  await page.screenshot({ path, animations: 'disabled' })
  await testInfo.attach(name, { path, contentType: 'image/png' })
}

/**
 * Calls one Api method over HTTP, as the browser-mode page does (`channel` as in the URL: 'settings/get');
 * returns its result. For changes "from another window" and for putting settings back after a spec.
 */
/** Runs `use` with an API request context of its own (for hooks outside a page), disposed afterwards. */
export async function withRequest<T>(playwright: PlaywrightWorkerArgs['playwright'], use: (request: APIRequestContext) => Promise<T>): Promise<T> {
  const request = await playwright.request.newContext()
  try {
    return await use(request)
  } finally {
    await request.dispose()
  }
}

export async function callApi(request: APIRequestContext, channel: string, args: readonly unknown[]): Promise<unknown> {
  const launch = new URL(e2eEnv(E2E_ENV.url))
  const response = await request.post(`${launch.origin}/api/${channel}`, {
    headers: { Authorization: `Bearer ${launch.searchParams.get('token') ?? ''}` },
    data: { args }
  })
  expect(response.ok(), `${channel} answered HTTP ${response.status()}`).toBe(true)
  const body: unknown = await response.json()
  if (typeof body !== 'object' || body === null || !('result' in body)) throw new Error(`${channel}: malformed reply`)
  return body.result
}
