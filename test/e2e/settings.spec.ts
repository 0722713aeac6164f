/**
 * @file Settings → General → Default sampling follows the app's settings: values that arrive after the dialog
 * opened show up, later changes show while nothing was typed, and what the user typed is kept when settings
 * change under it. The settings answers are held back with page.route, so the order of events is chosen,
 * not timed. Changes are made through the HTTP Api, as another window would; the settings found at the start
 * are put back at the end, so the specs that run later see the app as it was.
 */
import type { APIRequestContext, APIResponse, Locator, Page, Route } from '@playwright/test'
import { expect, test } from './fixtures'
import { e2eEnv, E2E_ENV } from './env'
import { callApi, composer, openApp, openSettingsTab, showSettingsTab, withRequest } from './helpers'

test.describe.configure({ mode: 'serial' })

/** The part of the settings these tests change. */
interface Changed {
  readonly theme: string
  readonly sampling: { readonly temperature: number; readonly topP: number; readonly maxTokens: number }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The theme and default sampling the app has now (checked: it crossed HTTP). */
async function readChanged(request: APIRequestContext): Promise<Changed> {
  const settings = await callApi(request, 'settings/get', [])
  const sampling = isRecord(settings) ? settings.sampling : undefined
  if (!isRecord(settings) || typeof settings.theme !== 'string' || !isRecord(sampling)) throw new Error('settings/get: unexpected shape')
  const { temperature, topP, maxTokens } = sampling
  if (typeof temperature !== 'number' || typeof topP !== 'number' || typeof maxTokens !== 'number') throw new Error('settings/get: bad sampling')
  return { theme: settings.theme, sampling: { temperature, topP, maxTokens } }
}

async function writeChanged(request: APIRequestContext, changed: Changed): Promise<void> {
  await callApi(request, 'settings/update', [changed])
}

/** The settings found before the first test, put back after the last. */
let original: Changed | null = null

test.beforeAll(async ({ playwright }) => {
  original = await withRequest(playwright, readChanged)
})

test.afterAll(async ({ playwright }) => {
  const back = original
  if (back !== null) await withRequest(playwright, (request) => writeChanged(request, back))
})

function startingSettings(): Changed {
  if (original === null) throw new Error('beforeAll did not read the settings')
  return original
}

/** Opens Settings on its General tab (theme and default sampling); returns the dialog. */
function openSettings(page: Page): Promise<Locator> {
  return openSettingsTab(page, 'General')
}

test('default sampling shows settings that arrive after the dialog opened', async ({ page }) => {
  const { sampling } = startingSettings()
  // Hold every settings answer until the dialog is open.
  const held: Route[] = []
  let holding = true
  await page.route('**/api/settings/get', async (route) => {
    if (holding) held.push(route)
    else await route.continue()
  })
  await page.goto(e2eEnv(E2E_ENV.url))
  await expect(composer(page)).toBeVisible()
  const dialog = await openSettings(page)
  // The app's first load and the dialog's own rescan are both waiting.
  await expect.poll(() => held.length).toBe(2)
  await expect(dialog.getByRole('heading', { name: 'Appearance' })).toBeVisible()
  await expect(dialog.getByRole('heading', { name: 'Default sampling for new chats' })).toHaveCount(0)

  holding = false
  for (const route of held.splice(0)) await route.continue()
  await expect(dialog.getByLabel('Temperature')).toHaveValue(String(sampling.temperature))
  await expect(dialog.getByLabel('Top-p')).toHaveValue(String(sampling.topP))
  await expect(dialog.getByLabel('Max tokens')).toHaveValue(String(sampling.maxTokens))
})

test('default sampling follows changed settings until the user types, then keeps what was typed', async ({ page }) => {
  const start = startingSettings()
  await openApp(page)
  // Each settings read is held until the change made meanwhile "in another window" is in, so it brings that change
  // while the form is on screen (switching tabs would start the form over).
  const held: Route[] = []
  await page.route('**/api/settings/get', (route) => {
    held.push(route)
  })
  const release = async (): Promise<void> => {
    for (const route of held.splice(0)) await route.continue()
  }
  const dialog = await openSettings(page)
  const temperature = dialog.getByLabel('Temperature')
  const maxTokens = dialog.getByLabel('Max tokens')
  await expect(maxTokens).toHaveValue(String(start.sampling.maxTokens))
  // The theme radio reads the settings directly: when it changes, the read's answer has landed.
  const otherTheme = start.theme === 'dark' ? 'light' : 'dark'
  const themeRadio = (theme: string): Locator =>
    dialog.getByRole('radio', { name: theme === 'dark' ? 'Dark' : theme === 'light' ? 'Light' : 'Match system' })

  // Changed elsewhere while nothing was typed: the form shows the new values (the dialog's opening rescan brings them).
  await expect.poll(() => held.length).toBe(1)
  await writeChanged(page.request, { theme: otherTheme, sampling: { ...start.sampling, temperature: 1.3 } })
  await release()
  await expect(themeRadio(otherTheme)).toBeChecked()
  await expect(temperature).toHaveValue('1.3')

  // Typed, then changed elsewhere: what was typed stays. The rescan is Scan again on the Models tab, held until the
  // user is back on General, has typed, and the change is in.
  await showSettingsTab(dialog, 'Models')
  await dialog.getByRole('button', { name: 'Scan again' }).click()
  await expect.poll(() => held.length).toBe(1)
  await showSettingsTab(dialog, 'General')
  await expect(temperature).toHaveValue('1.3')
  await maxTokens.fill('300')
  await writeChanged(page.request, { theme: start.theme, sampling: { ...start.sampling, temperature: 0.4, maxTokens: 999 } })
  await release()
  await expect(themeRadio(start.theme)).toBeChecked()
  await expect(maxTokens).toHaveValue('300')
  await expect(temperature).toHaveValue('1.3')

  // Saved: the form shows the settings again, which now hold what was saved. Picking a theme answers with the
  // settings as they are then, changed elsewhere meanwhile: the form shows them.
  await dialog.getByRole('button', { name: 'Save defaults' }).click()
  await expect(dialog.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible()
  expect((await readChanged(page.request)).sampling).toEqual({ ...start.sampling, temperature: 1.3, maxTokens: 300 })
  await writeChanged(page.request, { theme: start.theme, sampling: { ...start.sampling, maxTokens: 128 } })
  await themeRadio(otherTheme).check()
  await expect(maxTokens).toHaveValue('128')
  expect(held).toHaveLength(0)
})

test('a theme picked while an older settings answer is on its way stays picked', async ({ page }) => {
  const start = startingSettings()
  const picked = start.theme === 'dark' ? 'light' : 'dark'
  // Each settings answer is read from the app at once (so it holds the settings of that moment) and
  // delivered when the test says.
  const held: Array<{ route: Route; response: APIResponse }> = []
  await page.route('**/api/settings/get', async (route) => {
    held.push({ route, response: await route.fetch() })
  })
  await page.goto(e2eEnv(E2E_ENV.url))
  await expect(composer(page)).toBeVisible()
  const dialog = await openSettings(page)
  await expect.poll(() => held.length).toBe(2)
  const radio = dialog.getByRole('radio', { name: picked === 'dark' ? 'Dark' : 'Light' })
  // Nothing loaded yet: there is nothing to show a choice on.
  await expect(radio).toBeDisabled()

  // The dialog's rescan is the newest load: its answer is the one that lands (the app's first is dropped).
  const [first, opening] = held.splice(0)
  await opening.route.fulfill({ response: opening.response })
  await first.route.fulfill({ response: first.response })
  await expect(radio).toBeEnabled()

  // Another rescan (Scan again, on the Models tab) reads the settings, then the user goes back to General and picks
  // a theme before its answer arrives.
  await showSettingsTab(dialog, 'Models')
  await dialog.getByRole('button', { name: 'Scan again' }).click()
  await expect.poll(() => held.length).toBe(1)
  const [rescan] = held.splice(0)
  await showSettingsTab(dialog, 'General')
  await radio.check()
  await expect.poll(async () => (await readChanged(page.request)).theme).toBe(picked)

  // The old answer lands (marked by a temperature the form shows once it has): the choice stays.
  const old: unknown = await rescan.response.json()
  const settings = isRecord(old) ? old.result : undefined
  if (!isRecord(settings) || !isRecord(settings.sampling)) throw new Error('settings/get: unexpected shape')
  await rescan.route.fulfill({ response: rescan.response, json: { result: { ...settings, sampling: { ...settings.sampling, temperature: 1.7 } } } })
  await expect(dialog.getByLabel('Temperature')).toHaveValue('1.7')
  await expect(radio).toBeChecked()
  await expect(page.locator('html')).toHaveAttribute('data-theme', picked)
})
