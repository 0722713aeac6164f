/**
 * @file axe-core over the main views, in light and dark: the chat view with a conversation, its reply and the
 * device activity panel; Settings → General; Settings → Models; Settings → Devices. Dark is reached both ways the app offers: the
 * OS preference (emulated) and the theme picked in Settings. Any violation of a WCAG 2.0/2.1/2.2 A or AA rule
 * fails, listed with the elements it was found on. Every check first waits for the view's content to be
 * rendered (never for time), and reduced motion is emulated so no transition is caught half-way. The theme
 * found at the start is put back at the end, so the specs that run later see the app as it was.
 */
import { AxeBuilder } from '@axe-core/playwright'
import type { Locator, Page } from '@playwright/test'
import { expect, test } from './fixtures'
import { callApi, chooseModel, conversationButton, FAST_MODEL, openApp, openSettingsTab, replies, sendMessage, setChatSampling, showSettingsTab, waitForReplyEnd, withRequest } from './helpers'

test.describe.configure({ mode: 'serial' })

/** axe's tags for the WCAG 2.0, 2.1 and 2.2 success criteria at levels A and AA. */
const WCAG_A_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa']

const SCHEMES = ['light', 'dark'] as const

/** This spec's conversation; a title no other spec uses, since all specs share one app and database. */
const PROMPT = 'Ben saw a green frog'

/** Fails with every violation axe finds on the page as it is now, naming the view and the elements. */
async function expectNoViolations(page: Page, view: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(WCAG_A_AA).analyze()
  const found = results.violations.map(
    (v) => `${v.id} (${v.impact ?? 'no impact given'}): ${v.help}\n${v.nodes.map((n) => `    ${n.target.join(' ')}: ${n.failureSummary ?? ''}`).join('\n')}`
  )
  expect(found, `axe violations in ${view}`).toEqual([])
}

/** Runs axe once per colour scheme the OS may prefer. */
async function expectNoViolationsInEachScheme(page: Page, view: string): Promise<void> {
  for (const colorScheme of SCHEMES) {
    await page.emulateMedia({ colorScheme, reducedMotion: 'reduce' })
    await expectNoViolations(page, `${view}, ${colorScheme}`)
  }
}

/** Opens the device activity panel and waits for its meters and footer. */
async function openActivity(page: Page): Promise<Locator> {
  const toggle = page.getByRole('button', { name: 'Device activity', exact: true })
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click()
  const panel = page.getByRole('complementary', { name: 'Device activity' })
  await expect(panel.locator('[data-device-id]').first()).toBeVisible()
  await expect(panel.getByText('Last 60 s')).toBeVisible()
  return panel
}

/** Opens Settings on its General tab, once the settings have loaded. */
async function openSettings(page: Page): Promise<Locator> {
  const dialog = await openSettingsTab(page, 'General')
  await expect(dialog.getByLabel('Temperature')).not.toHaveValue('')
  await expect(dialog.getByRole('checkbox', { name: 'Serve the OpenAI-compatible API' })).toBeVisible()
  return dialog
}

/** The theme picked when the spec started, put back after the last test. */
let originalTheme: string | null = null

test.beforeAll(async ({ playwright }) => {
  const settings = await withRequest(playwright, (request) => callApi(request, 'settings/get', []))
  const theme = typeof settings === 'object' && settings !== null && 'theme' in settings ? settings.theme : null
  originalTheme = typeof theme === 'string' ? theme : null
})

test.afterAll(async ({ playwright }) => {
  const theme = originalTheme
  if (theme !== null) await withRequest(playwright, (request) => callApi(request, 'settings/update', [{ theme }]))
})

test('the chat view with a conversation and a reply has no WCAG A/AA violations, light and dark', async ({ page }) => {
  await openApp(page)
  await chooseModel(page, FAST_MODEL)
  await setChatSampling(page, { temperature: 0, maxTokens: 60 })
  await sendMessage(page, PROMPT)
  await waitForReplyEnd(replies(page).last())
  await expect(replies(page).last().locator('.message-meta')).toContainText('tok/s')
  await openActivity(page)
  await expectNoViolationsInEachScheme(page, 'chat view')
})

test('Settings, General, Models and Devices, have no WCAG A/AA violations, light and dark', async ({ page }) => {
  await openApp(page)
  const dialog = await openSettings(page)
  await expectNoViolationsInEachScheme(page, 'Settings → General')

  await showSettingsTab(dialog, 'Models')
  await expect(dialog.getByRole('list', { name: 'Models found' })).toBeVisible()
  await expect(dialog.getByRole('list', { name: 'Model catalog' })).toBeVisible()
  await expect(dialog.getByRole('region', { name: 'Other servers' })).toBeVisible()
  await expectNoViolationsInEachScheme(page, 'Settings → Models')

  await dialog.getByRole('tab', { name: 'Devices' }).click()
  await expect(dialog.getByRole('list', { name: 'Devices' })).toBeVisible()
  await expect(dialog.getByRole('radio', { name: /^Auto/ })).toBeVisible()
  await expectNoViolationsInEachScheme(page, 'Settings → Devices')
})

test('the dark theme picked in Settings has no WCAG A/AA violations while the OS prefers light', async ({ page }) => {
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' })
  await openApp(page)
  const dialog = await openSettings(page)
  await dialog.getByRole('radio', { name: 'Dark' }).check()
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark')
  await expectNoViolations(page, 'Settings → General, dark theme')
  await dialog.getByRole('button', { name: 'Close' }).click()
  await expect(dialog).toBeHidden()

  await conversationButton(page, PROMPT).click()
  await expect(replies(page).last()).toBeVisible()
  await waitForReplyEnd(replies(page).last())
  await openActivity(page)
  await expectNoViolations(page, 'chat view, dark theme')

  await page.getByRole('button', { name: 'Settings', exact: true }).click()
  await dialog.getByRole('radio', { name: 'Match system' }).check()
  await expect(page.locator('html')).not.toHaveAttribute('data-theme', /./)
})
