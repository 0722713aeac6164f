/**
 * @file Heterogeneous execution end to end, in browser mode against the real engine and this machine's real
 * devices: Settings → Devices lists the CPU and the software GPU (Mesa lavapipe through WebGPU, labelled
 * Software); a custom split across them is saved (prefill on the software GPU, decode on the CPU with the
 * lm-head on the software GPU, so both work on every token) and is still there after a reload; while a reply
 * is generated the live activity view shows both devices above 0% and tokens/s above 0; the reply's stats
 * name both devices with their busy time. The placement that was chosen before is restored at the
 * end, so the specs that run later see the app as it was. WebGPU on lavapipe compiles its shaders slowly the
 * first time (~15 s): the timeouts are generous.
 */
import type { Locator, Page } from '@playwright/test'
import { expect, test } from './fixtures'
import { chooseModel, LONG_MODEL, openApp, openSettingsTab, replies, saveScreenshot, sendMessage, setChatSampling, waitForReplyEnd } from './helpers'

const CPU = 'cpu'
const GPU = 'webgpu-0'

/** The first generation on the software GPU compiles its shaders (~15 s on lavapipe), then decodes slowly. */
const GENERATION_TIMEOUT_MS = 180_000

/** A device's row in the Settings list. */
function deviceRow(dialog: Locator, id: string): Locator {
  return dialog.getByRole('list', { name: 'Devices' }).locator(`[data-device-id="${id}"]`)
}

/** The display name of a device, as the Settings list shows it. */
async function deviceName(dialog: Locator, id: string): Promise<string> {
  const name = (await deviceRow(dialog, id).locator('.device-name').textContent())?.trim() ?? ''
  expect(name).not.toBe('')
  return name
}

/** Opens the live device activity panel if it is closed; returns it. */
async function openActivity(page: Page): Promise<Locator> {
  const toggle = page.getByRole('button', { name: 'Device activity', exact: true })
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click()
  await expect(toggle).toHaveAttribute('aria-expanded', 'true')
  const panel = page.getByRole('complementary', { name: 'Device activity' })
  await expect(panel).toBeVisible()
  return panel
}

/**
 * In-page recorder of what the live view shows while the last reply is streaming: the highest "now" percent
 * each device's meter displayed, and the highest tokens/s. A MutationObserver (passive, so it does not slow
 * the engine down the way polling over the DevTools protocol would). A string: the test project type-checks
 * without DOM types.
 */
const USAGE_RECORDER = `(() => {
  const seen = { now: {}, tokensPerSecond: 0, observations: 0 }
  window.__tandemUsage = seen
  const record = () => {
    const all = document.querySelectorAll('article[aria-label="Assistant reply"]')
    const reply = all[all.length - 1]
    if (reply === undefined || reply.getAttribute('data-status') !== 'streaming') return
    seen.observations++
    for (const item of document.querySelectorAll('#usage-panel [data-device-id]')) {
      const id = item.getAttribute('data-device-id')
      const now = Number(item.getAttribute('data-now'))
      if (id !== null && Number.isFinite(now)) seen.now[id] = Math.max(seen.now[id] ?? 0, now)
    }
    const tokens = document.querySelector('#usage-panel [data-tokens-per-second]')
    const tps = Number(tokens === null ? 0 : tokens.getAttribute('data-tokens-per-second'))
    if (Number.isFinite(tps)) seen.tokensPerSecond = Math.max(seen.tokensPerSecond, tps)
  }
  new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true })
})()`

/** What the recorder saw. */
interface UsageSeen {
  readonly now: Record<string, number>
  readonly tokensPerSecond: number
  readonly observations: number
}

async function usageSeen(page: Page): Promise<UsageSeen> {
  const value: unknown = await page.evaluate('window.__tandemUsage')
  if (typeof value !== 'object' || value === null || !('now' in value) || !('tokensPerSecond' in value) || !('observations' in value)) {
    throw new Error('usage recorder not installed')
  }
  const now: Record<string, number> = {}
  if (typeof value.now === 'object' && value.now !== null) for (const [k, v] of Object.entries(value.now)) if (typeof v === 'number') now[k] = v
  return { now, tokensPerSecond: Number(value.tokensPerSecond), observations: Number(value.observations) }
}

/** Every visible control inside `scope` has an accessible name (computed the way screen readers do). */
async function expectNamedControls(scope: Locator): Promise<void> {
  for (const role of ['button', 'textbox', 'combobox', 'radio', 'spinbutton', 'slider', 'tab'] as const) {
    for (const control of await scope.getByRole(role).all()) {
      if (await control.isVisible()) await expect(control).toHaveAccessibleName(/\S/)
    }
  }
}

/** The placement radio checked before the split test changed it (restored after the last test). */
let originalPreset: string | null = null

test.afterAll(async ({ browser }) => {
  if (originalPreset === null || originalPreset === 'custom') return
  const page = await browser.newPage()
  try {
    await openApp(page)
    const dialog = await openSettingsTab(page, 'Devices')
    const radio = dialog.locator(`input[name="placement-preset"][value="${originalPreset}"]`)
    if (!(await radio.isChecked())) {
      await radio.check()
      await expect(dialog.getByRole('status').filter({ hasText: 'Saved' })).toBeVisible({ timeout: 60_000 })
    }
  } finally {
    await page.close()
  }
})

test('Settings → Devices lists the CPU and the software GPU, labelled as software', async ({ page }, testInfo) => {
  await openApp(page)
  const dialog = await openSettingsTab(page, 'Devices')

  const cpu = deviceRow(dialog, CPU)
  await expect(cpu).toContainText('Ready', { timeout: 60_000 })
  await expect(cpu).toContainText('CPU')
  const gpu = deviceRow(dialog, GPU)
  await expect(gpu).toContainText('Ready')
  await expect(gpu).toContainText('Software GPU')
  await expect(gpu.getByText('Software', { exact: true })).toBeVisible()
  await expect(gpu).toContainText('emulated on the CPU')
  await expect(gpu).toContainText('ONNX Runtime webgpu')

  // every preset and Custom are offered; the choice's summary is shown
  for (const label of ['CPU only', 'GPU only', 'Prefill on NPU, decode on GPU', 'Layer split', 'Tensor split', 'Auto', 'Custom']) {
    await expect(dialog.getByRole('radio', { name: new RegExp(`^${label}`) })).toBeVisible()
  }
  await expect(dialog.getByRole('region', { name: 'Runs next' })).toContainText('Prefill')
  await dialog.getByRole('button', { name: 'Advanced: op groups and splits' }).click()
  await expect(dialog.getByRole('combobox', { name: 'ffn in decode' })).toBeVisible()
  await expectNamedControls(dialog)
  await page.mouse.move(0, 0)
  await saveScreenshot(page, testInfo, 'settings-devices-1280x800')
  await page.emulateMedia({ colorScheme: 'dark' })
  await saveScreenshot(page, testInfo, 'settings-devices-1280x800-dark')

  // the tabs work from the keyboard: arrows move between them (wrapping at the ends), Home and End go to the ends
  const tabs = dialog.getByRole('tablist', { name: 'Settings sections' }).getByRole('tab')
  await expect(tabs).toHaveText(['General', 'Models', 'Devices'])
  const selects = async (name: string, shown: Locator): Promise<void> => {
    const tab = dialog.getByRole('tab', { name, exact: true })
    await expect(tab).toHaveAttribute('aria-selected', 'true')
    await expect(tab).toBeFocused()
    await expect(shown).toBeVisible()
  }
  const general = dialog.getByRole('radio', { name: 'Match system' })
  const models = dialog.getByRole('list', { name: 'Models found' })
  const devices = dialog.getByRole('list', { name: 'Devices' })
  await dialog.getByRole('tab', { name: 'Devices' }).focus()
  await page.keyboard.press('ArrowLeft')
  await selects('Models', models)
  await page.keyboard.press('ArrowLeft')
  await selects('General', general)
  await page.keyboard.press('ArrowLeft')
  await selects('Devices', devices)
  await page.keyboard.press('ArrowRight')
  await selects('General', general)
  await page.keyboard.press('End')
  await selects('Devices', devices)
  await page.keyboard.press('Home')
  await selects('General', general)
  await page.keyboard.press('ArrowRight')
  await selects('Models', models)
})

test('a split across the CPU and the software GPU: saved, kept after a reload, both devices busy while generating, named in the stats', async ({ page }, testInfo) => {
  test.setTimeout(GENERATION_TIMEOUT_MS + 120_000)
  await openApp(page)
  // the placement is worked out for the default model, which is the one last picked
  await chooseModel(page, LONG_MODEL)
  let dialog = await openSettingsTab(page, 'Devices')
  originalPreset = await dialog.getByRole('radio', { checked: true }).getAttribute('value')
  const cpuName = await deviceName(dialog, CPU)
  const gpuName = await deviceName(dialog, GPU)

  // per stage: prefill on the software GPU, decode on the CPU -> an unsaved Custom placement
  await dialog.getByLabel('Prefill (reading the prompt) runs on').selectOption(GPU)
  await dialog.getByLabel('Decode (writing the reply) runs on').selectOption(CPU)
  await expect(dialog.getByRole('radio', { name: /^Custom/ })).toBeChecked()
  // advanced: the lm-head of decode on the software GPU too, so both devices work on every token
  await dialog.getByRole('button', { name: 'Advanced: op groups and splits' }).click()
  await dialog.getByRole('combobox', { name: 'lm-head in decode' }).selectOption(GPU)

  // the form refuses a split between a device and itself, and says what to do
  await dialog.getByRole('button', { name: 'Add decode split' }).click()
  await dialog.getByRole('combobox', { name: 'Decode split 1: second device' }).selectOption(await dialog.getByRole('combobox', { name: 'Decode split 1: first device' }).inputValue())
  await dialog.getByRole('button', { name: 'Save placement' }).click()
  await expect(dialog.getByRole('alert')).toContainText('choose two different devices')
  await dialog.getByRole('slider', { name: 'Decode split 1: share of the rows on the first device' }).scrollIntoViewIfNeeded()
  await page.mouse.move(0, 0)
  await saveScreenshot(page, testInfo, 'settings-devices-split-1280x800')
  await dialog.getByRole('button', { name: 'Remove decode split 1' }).click()

  // a chunk longer than this model takes: the form knows the engine's limit for the model and says so before
  // asking the app; nothing is stored
  const chunk = dialog.getByRole('spinbutton', { name: 'Prefill chunk (tokens)' })
  const chunkTokens = await chunk.inputValue()
  const maxTokens = Number(await chunk.getAttribute('max'))
  expect(maxTokens).toBeGreaterThan(Number(chunkTokens))
  await chunk.fill(String(maxTokens + 1))
  await dialog.getByRole('button', { name: 'Save placement' }).click()
  await expect(dialog.getByRole('alert')).toContainText(`The prefill chunk must be a whole number of tokens from 1 to ${maxTokens}.`)
  await chunk.fill(chunkTokens)

  const summary = dialog.getByRole('region', { name: 'After saving' })
  await expect(summary).toContainText(`Everything on ${gpuName}`)
  await expect(summary).toContainText(`${gpuName}: lm-head`)
  await dialog.getByRole('button', { name: 'Save placement' }).click()
  await expect(dialog.getByRole('status').filter({ hasText: 'Saved' })).toBeVisible({ timeout: 60_000 })
  const runsNext = dialog.getByRole('region', { name: 'Runs next' })
  await expect(runsNext).toContainText(`Everything on ${gpuName}`)
  await expect(runsNext).toContainText(`${cpuName}: `)
  await page.mouse.move(0, 0)
  await saveScreenshot(page, testInfo, 'settings-devices-custom-1280x800')
  await dialog.getByRole('button', { name: 'Close' }).click()

  // the choice persisted (SQLite), and the editor reads it back
  await page.reload()
  dialog = await openSettingsTab(page, 'Devices')
  await expect(dialog.getByRole('radio', { name: /^Custom/ })).toBeChecked()
  await expect(dialog.getByLabel('Prefill (reading the prompt) runs on')).toHaveValue(GPU)
  await expect(dialog.getByLabel('Decode (writing the reply) runs on')).toHaveValue(CPU)
  await dialog.getByRole('button', { name: 'Advanced: op groups and splits' }).click()
  await expect(dialog.getByRole('combobox', { name: 'lm-head in decode' })).toHaveValue(GPU)
  await expect(dialog.getByRole('combobox', { name: 'lm-head in prefill' })).toHaveValue('')
  await dialog.getByRole('button', { name: 'Close' }).click()

  // generate with the split, watching the live view: 300 tokens at the server's pace (E2E_TOKEN_DELAY_MS,
  // env.ts) stream for at least 6 s on any machine, many of the view's 250 ms updates while the page still
  // shows the reply streaming; both devices work on every token, so each update shows them busy
  await page.getByRole('button', { name: 'New chat' }).click()
  await chooseModel(page, LONG_MODEL)
  await setChatSampling(page, { temperature: 0.8, maxTokens: 300 })
  const panel = await openActivity(page)
  await expect(panel.getByRole('img', { name: new RegExp(`^${escapeRegex(gpuName)} \\(software\\) busy: \\d+% now`) })).toBeVisible()
  await page.evaluate(USAGE_RECORDER)
  await sendMessage(page, 'The little robot')
  const reply = replies(page).last()
  await expect(reply.locator('.reply-text')).not.toBeEmpty({ timeout: GENERATION_TIMEOUT_MS })
  await saveScreenshot(page, testInfo, 'activity-generating-1280x800')
  expect(await waitForReplyEnd(reply, GENERATION_TIMEOUT_MS)).toBe('complete')

  const seen = await usageSeen(page)
  testInfo.annotations.push({ type: 'live view while generating', description: JSON.stringify(seen) })
  expect(seen.observations).toBeGreaterThan(0)
  expect(seen.now[CPU] ?? 0).toBeGreaterThan(0)
  expect(seen.now[GPU] ?? 0).toBeGreaterThan(0)
  expect(seen.tokensPerSecond).toBeGreaterThan(0)

  // the stats name both devices, with each one's busy time behind "Device time"
  const meta = reply.locator('.message-meta')
  await expect(meta).toContainText(cpuName)
  await expect(meta).toContainText(gpuName)
  await reply.getByText('Device time').click()
  const busy = reply.getByRole('list', { name: 'Busy time per device' })
  await expect(busy.getByRole('listitem').filter({ hasText: cpuName })).toContainText(/\d+(\.\d+)? (ms|s) busy/)
  await expect(busy.getByRole('listitem').filter({ hasText: gpuName })).toContainText(/\d+(\.\d+)? (ms|s) busy/)
  await saveScreenshot(page, testInfo, 'activity-after-reply-1280x800')
})

test('Auto: measured before the next reply, then explained with a predicted speed', async ({ page }, testInfo) => {
  // Auto profiles each op group on each device for the model's shapes before its first reply (cached after)
  test.setTimeout(GENERATION_TIMEOUT_MS + 120_000)
  await openApp(page)
  await chooseModel(page, LONG_MODEL)
  let dialog = await openSettingsTab(page, 'Devices')
  originalPreset ??= await dialog.getByRole('radio', { checked: true }).getAttribute('value')
  const auto = dialog.getByRole('radio', { name: /^Auto/ })
  if (!(await auto.isChecked())) {
    await auto.check()
    await expect(dialog.getByRole('status').filter({ hasText: 'Saved' })).toBeVisible({ timeout: 60_000 })
  }
  await expect(auto).toBeChecked()
  // before measuring it says so (or, measured already, explains its choice)
  await expect(dialog.getByRole('region', { name: 'Runs next' }).locator('.placement-explanation')).toHaveText(/\S/)
  await dialog.getByRole('button', { name: 'Close' }).click()

  await page.getByRole('button', { name: 'New chat' }).click()
  await chooseModel(page, LONG_MODEL)
  await setChatSampling(page, { temperature: 0, maxTokens: 40 })
  await sendMessage(page, 'The cat')
  expect(await waitForReplyEnd(replies(page).last(), GENERATION_TIMEOUT_MS)).toBe('complete')

  dialog = await openSettingsTab(page, 'Devices')
  const runsNext = dialog.getByRole('region', { name: 'Runs next' })
  await expect(runsNext).toContainText(/Predicted on this machine: prefill [\d.,]+ tok\/s · decode [\d.,]+ tok\/s/)
  const explanation = (await runsNext.locator('.placement-explanation').textContent()) ?? ''
  testInfo.annotations.push({ type: 'Auto explanation', description: explanation })
  expect(explanation).not.toMatch(/not measured/)
  await runsNext.scrollIntoViewIfNeeded()
  await page.mouse.move(0, 0)
  await saveScreenshot(page, testInfo, 'settings-devices-auto-1280x800')
})

test('the live view stays usable in a narrow window (400×800)', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 400, height: 800 })
  await openApp(page)
  const panel = await openActivity(page)
  // the device list arrives once the devices are probed (seconds on a fresh launch)
  const meters = panel.getByRole('list', { name: 'Busy time per device' })
  await expect(meters.locator(`[data-device-id="${CPU}"]`).getByRole('img')).toBeVisible({ timeout: 60_000 })
  await expect(meters.locator(`[data-device-id="${GPU}"]`)).toContainText('Software')
  for (const chart of await panel.getByRole('img').all()) await expect(chart).toHaveAccessibleName(/\d+(\.\d+)?% now|Tokens per second/)
  const fits: unknown = await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')
  expect(fits).toBe(true)
  // the composer is still there below the panel
  await expect(page.getByRole('textbox', { name: 'Message', exact: true })).toBeVisible()
  await saveScreenshot(page, testInfo, 'activity-400x800')
  await page.emulateMedia({ colorScheme: 'dark' })
  await saveScreenshot(page, testInfo, 'activity-400x800-dark')
  await panel.getByRole('button', { name: 'Hide device activity' }).click()
  await expect(page.getByRole('button', { name: 'Device activity', exact: true })).toHaveAttribute('aria-expanded', 'false')
  await page.emulateMedia({ colorScheme: 'light' })

  // "Change placement" in the panel opens Settings → Devices, which fits too, the advanced table included
  await (await openActivity(page)).getByRole('button', { name: 'Change placement' }).click()
  const dialog = page.getByRole('dialog', { name: 'Settings' })
  await expect(dialog.getByRole('tab', { name: 'Devices' })).toHaveAttribute('aria-selected', 'true')
  await dialog.getByRole('button', { name: 'Advanced: op groups and splits' }).click()
  await expect(dialog.getByRole('combobox', { name: 'ffn in decode' })).toBeVisible()
  const dialogFits: unknown = await page.evaluate(`(() => {
    const body = document.querySelector('dialog[open] .modal-body')
    return body !== null && body.scrollWidth <= body.clientWidth
  })()`)
  expect(dialogFits).toBe(true)
  await dialog.getByRole('tab', { name: 'Devices' }).scrollIntoViewIfNeeded()
  await saveScreenshot(page, testInfo, 'settings-devices-400x800')
})

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
