/**
 * @file Settings → Models → Other servers in browser mode, against real OpenAI-compatible servers on loopback. A plain-HTTP URL
 * to another machine is refused with the reason. The e2e server's own OpenAI API (`tandem serve --api`, started by
 * the global setup) is added as "Loopback Tandem": its models are listed under it and in the chat's picker, marked
 * with its name, and a chat with one streams a reply whose stats say where it ran (remote chats run outside the local
 * generation queue, so Tandem asking itself does not wait on itself). A misbehaving server started here (its model
 * list answers; its chat sends two frames and then drops the connection; it takes one key) shows the partial reply
 * and why it broke off, and a refused key in its row until Change key gives the right one. Removing the servers takes
 * their models out of the picker. Last, Tandem as its own server must not list its models back into itself. Nothing
 * is timed: the tests wait on what the page shows. Servers left by a failed run are removed afterwards.
 */
import type { APIRequestContext, Locator, Page } from '@playwright/test'
import { FLAKY_MODEL, startFlakyServer, type FlakyServer } from '../helpers/flaky-openai-server'
import { e2eEnv, E2E_ENV } from './env'
import { expect, test } from './fixtures'
import { callApi, expectNoViolations, FAST_MODEL, openApp, openSettingsTab, recordedGrowth, recordGrowth, replies, saveScreenshot, sendMessage, setChatSampling, waitForReplyEnd, withRequest } from './helpers'

test.describe.configure({ mode: 'serial' })

const LOOPBACK = 'Loopback Tandem'
const FLAKY = 'Flaky server'
/** the one key the misbehaving server takes besides none */
const FLAKY_KEY = 'flaky-key-0123456789'

let flaky: FlakyServer | null = null
let flakyUrl = ''

test.beforeAll(async () => {
  flaky = await startFlakyServer({ behaviour: 'drop', key: FLAKY_KEY })
  flakyUrl = flaky.url
})

/** Removes every server the app lists (what a failed run left), through the HTTP Api. */
async function removeAllServers(request: APIRequestContext): Promise<void> {
  const listed = await callApi(request, 'servers/list', [])
  const servers = typeof listed === 'object' && listed !== null && 'servers' in listed && Array.isArray(listed.servers) ? listed.servers : []
  for (const s of servers) {
    if (typeof s === 'object' && s !== null && 'id' in s && typeof s.id === 'string') await callApi(request, 'servers/remove', [s.id])
  }
}

test.afterAll(async ({ playwright }) => {
  await withRequest(playwright, removeAllServers)
  await flaky?.close()
})

async function openSettings(page: Page): Promise<{ dialog: Locator; section: Locator }> {
  const dialog = await openSettingsTab(page, 'Models')
  const section = dialog.getByRole('region', { name: 'Other servers' })
  await expect(section).toBeVisible()
  return { dialog, section }
}

/** Fills the add form and presses Add server. */
async function addServer(section: Locator, name: string, url: string, key: string): Promise<void> {
  const form = section.getByRole('form', { name: 'Add a server' })
  await form.getByRole('textbox', { name: 'Name' }).fill(name)
  await form.getByRole('textbox', { name: 'URL' }).fill(url)
  await form.getByLabel('Key', { exact: true }).fill(key)
  await form.getByRole('button', { name: 'Add server' }).click()
}

/** Opens the row's Change key form, types `key` and saves it; waits until the form has closed. */
async function changeKey(row: Locator, key: string): Promise<void> {
  await row.getByRole('button', { name: /^Change the key of / }).click()
  const form = row.getByRole('form', { name: /^Change the key of / })
  await form.getByLabel(/^New key for /).fill(key)
  await form.getByRole('button', { name: 'Save key' }).click()
  await expect(form).toHaveCount(0)
}

/** A server's row in the list. */
function serverRow(section: Locator, name: string): Locator {
  return section
    .getByRole('list', { name: 'Other servers' })
    .getByRole('listitem')
    .filter({ has: section.page().getByText(name, { exact: true }) })
}

/** The header's model picker. */
function picker(page: Page): Locator {
  return page.getByRole('combobox', { name: 'Model', exact: true })
}

/** Picks the option whose text is exactly `label` in the header's picker. */
async function chooseOption(page: Page, label: string): Promise<void> {
  const option = picker(page).getByRole('option', { name: label, exact: true })
  await expect(option).toHaveCount(1)
  const value = await option.getAttribute('value')
  if (value === null) throw new Error(`option ${label} has no value`)
  await picker(page).selectOption(value)
  await expect(picker(page)).toHaveValue(value)
}

/** True when the page is no wider than the window (no sideways scrolling). */
async function fitsWidth(page: Page): Promise<boolean> {
  const fits: unknown = await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')
  return fits === true
}

test('another server: a plain-HTTP address elsewhere is refused; Tandem’s own API is added, listed, picked and chatted with', async ({ page }, testInfo) => {
  test.setTimeout(120_000)
  await openApp(page)
  const { dialog, section } = await openSettings(page)
  await expect(section.getByText('No other servers yet.')).toBeVisible()
  // browser mode has no keychain: the form says so next to the key
  await expect(section.getByText(/a key is kept only until Tandem quits/)).toBeVisible()

  await addServer(section, 'Example', 'http://example.com/v1', '')
  await expect(section.getByRole('alert')).toContainText('example.com needs https://')
  await expect(section.getByRole('list', { name: 'Other servers' })).toHaveCount(0)

  await addServer(section, LOOPBACK, e2eEnv(E2E_ENV.apiUrl), e2eEnv(E2E_ENV.apiKey))
  const row = serverRow(section, LOOPBACK)
  await expect(row.getByRole('list', { name: `Models on ${LOOPBACK}` })).toContainText(FAST_MODEL)
  await expect(row).toContainText(e2eEnv(E2E_ENV.apiUrl))
  await expect(row).toContainText('Key kept until Tandem quits')
  await expect(section.getByRole('status')).toContainText(`Added ${LOOPBACK}.`)
  // the key field was cleared, and the key is never shown
  await expect(section.getByLabel('Key', { exact: true })).toHaveValue('')
  await expect(section).not.toContainText(e2eEnv(E2E_ENV.apiKey))
  // the local library lists this computer's models only; the default-model picker offers the server's too
  const found = dialog.getByRole('list', { name: 'Models found' })
  await expect(found.getByText(FAST_MODEL, { exact: true })).toHaveCount(1)
  await expect(found).not.toContainText(e2eEnv(E2E_ENV.apiUrl))
  await expect(dialog.getByRole('combobox', { name: 'Default model for new chats' }).getByRole('option', { name: `${FAST_MODEL} — ${LOOPBACK}`, exact: true })).toHaveCount(1)

  await row.scrollIntoViewIfNeeded()
  await expectNoViolations(page, 'Settings → Models → Other servers with a server')
  await page.setViewportSize({ width: 400, height: 800 })
  await row.scrollIntoViewIfNeeded()
  expect(await fitsWidth(page)).toBe(true)
  await saveScreenshot(page, testInfo, 'settings-other-servers-400')
  await page.setViewportSize({ width: 1280, height: 800 })
  await dialog.getByRole('button', { name: 'Close' }).click()

  // the chat's picker groups the models: this computer's, then the server's, each marked with its name
  await page.getByRole('button', { name: 'New chat' }).click()
  await expect(picker(page).locator('optgroup[label="This computer"]').getByRole('option', { name: FAST_MODEL })).not.toHaveCount(0)
  await expect(picker(page).locator(`optgroup[label="${LOOPBACK}"]`).getByRole('option', { name: `${FAST_MODEL} — ${LOOPBACK}`, exact: true })).toHaveCount(1)
  await chooseOption(page, `${FAST_MODEL} — ${LOOPBACK}`)
  await expect(page.getByText(`Replies come from ${FAST_MODEL}, running on ${LOOPBACK}.`)).toBeVisible()
  // paced by the e2e server (E2E_TOKEN_DELAY_MS a token): long enough to be seen growing on any machine
  await setChatSampling(page, { temperature: 0, maxTokens: 60 })
  await recordGrowth(page)
  await sendMessage(page, 'Once upon a time')
  const reply = replies(page).last()
  expect(await waitForReplyEnd(reply, 60_000)).toBe('complete')
  expect((await recordedGrowth(page)).length).toBeGreaterThan(1)
  await expect(reply.locator('.reply-text')).not.toBeEmpty()
  await expect(reply.getByText(`· on ${LOOPBACK}`)).toBeVisible()
  await saveScreenshot(page, testInfo, 'chat-remote-reply')
})

test('a server that drops the connection mid-reply: the text so far stays, with why it broke off; removed servers leave the picker', async ({ page }, testInfo) => {
  await openApp(page)
  const { dialog, section } = await openSettings(page)
  await addServer(section, FLAKY, flakyUrl, '')
  const row = serverRow(section, FLAKY)
  await expect(row.getByRole('list', { name: `Models on ${FLAKY}` })).toContainText(FLAKY_MODEL)
  await expect(row).toContainText('No key')
  await dialog.getByRole('button', { name: 'Close' }).click()

  await page.getByRole('button', { name: 'New chat' }).click()
  await chooseOption(page, `${FLAKY_MODEL} — ${FLAKY}`)
  await sendMessage(page, 'Tell me a story')
  const reply = replies(page).last()
  expect(await waitForReplyEnd(reply)).toBe('error')
  await expect(reply.locator('.reply-text')).toHaveText('Once upon a time')
  await expect(reply).toContainText('The reply broke off.')
  await expect(reply).toContainText(/connection to 127\.0\.0\.1:\d+ dropped/)
  await page.emulateMedia({ colorScheme: 'dark' })
  await saveScreenshot(page, testInfo, 'chat-remote-dropped-dark')
  await page.emulateMedia({ colorScheme: 'light' })

  const again = await openSettings(page)
  await again.section.getByRole('button', { name: `Remove server ${LOOPBACK}` }).click()
  await expect(serverRow(again.section, LOOPBACK)).toHaveCount(0)
  // Change key: a key the server refuses is reported in its row; the one it takes mends it
  const flakyRow = serverRow(again.section, FLAKY)
  await changeKey(flakyRow, 'wrong-key-wrong-key')
  await expect(flakyRow).toContainText('Cannot be used now: ')
  await expect(flakyRow).toContainText('refused the key (HTTP 401)')
  await changeKey(flakyRow, FLAKY_KEY)
  await expect(flakyRow).not.toContainText('Cannot be used now: ')
  await expect(flakyRow.getByRole('list', { name: `Models on ${FLAKY}` })).toContainText(FLAKY_MODEL)
  await expect(flakyRow).toContainText('Key kept until Tandem quits')
  await saveScreenshot(page, testInfo, 'settings-other-servers-1280')
  await again.section.getByRole('button', { name: `Remove server ${FLAKY}` }).click()
  await expect(again.section.getByText('No other servers yet.')).toBeVisible()
  await again.dialog.getByRole('button', { name: 'Close' }).click()
  await page.getByRole('button', { name: 'New chat' }).click()
  await expect(picker(page).locator('optgroup')).toHaveCount(0)
  await expect(picker(page).getByRole('option', { name: new RegExp(`— (${LOOPBACK}|${FLAKY})$`) })).toHaveCount(0)
  await expect(picker(page).getByRole('option', { name: new RegExp(`^${FAST_MODEL.replace('.', '\\.')} \\(`) })).toHaveCount(1)
})

test('Tandem added as a server of its own: its list is not fed back into itself, and a new key is checked at once', async ({ page }) => {
  await openApp(page)
  const first = await openSettings(page)
  await addServer(first.section, LOOPBACK, e2eEnv(E2E_ENV.apiUrl), e2eEnv(E2E_ENV.apiKey))
  await expect(serverRow(first.section, LOOPBACK).getByRole('list', { name: `Models on ${LOOPBACK}` })).toContainText(FAST_MODEL)
  await first.dialog.getByRole('button', { name: 'Close' }).click()
  // opening Settings asks every server again: Tandem's API must not offer back the models it has from itself
  // ("Loopback Tandem/stories260K.bin", then "Loopback Tandem/Loopback Tandem/…" at each refresh)
  const { section } = await openSettings(page)
  const row = serverRow(section, LOOPBACK)
  const models = row.getByRole('list', { name: `Models on ${LOOPBACK}` })
  await expect(models).toContainText(FAST_MODEL)
  await expect(models).not.toContainText(`${LOOPBACK}/`)
  // the same key again: the server is asked with it and answers (it must not wait on its own model list)
  await changeKey(row, e2eEnv(E2E_ENV.apiKey))
  await expect(models).toContainText(FAST_MODEL)
  await expect(row).not.toContainText('Cannot be used now: ')
  await section.getByRole('button', { name: `Remove server ${LOOPBACK}` }).click()
  await expect(section.getByText('No other servers yet.')).toBeVisible()
})
