/**
 * @file Settings → Devices → Integer NPUs, as a user with an integer NPU turns W8A8 on: the switch and the share of
 * layers without a shadow are stored (still there after a reload); a reply with W8A8 on and the model never
 * calibrated fails with a message that says how to calibrate, and turning W8A8 off answers again.
 */
import { expect, test } from './fixtures'
import { callApi, chooseModel, FAST_MODEL, openApp, openSettingsTab, replies, sendMessage, waitForReplyEnd, withRequest } from './helpers'

test.describe.configure({ mode: 'serial' })

// whatever a failed run left behind, the other specs chat in float
test.afterAll(async ({ playwright }) => {
  await withRequest(playwright, (request) => callApi(request, 'settings/update', [{ npuQuantization: { w8a8: false, shadowPrunedPercent: 85 } }]))
})

test('W8A8 is a stored setting; without a calibration a reply says to calibrate; off again, the model answers', async ({ page }) => {
  test.setTimeout(120_000)
  await openApp(page)
  let dialog = await openSettingsTab(page, 'Devices')
  const section = dialog.getByRole('region', { name: 'Integer NPUs' })
  await expect(section.getByLabel('Run NPU matmuls in W8A8')).not.toBeChecked()
  await expect(section.getByLabel('Layers without a shadow (%)')).toHaveValue('85')
  await section.getByLabel('Layers without a shadow (%)').fill('120')
  await section.getByRole('button', { name: 'Save' }).click()
  await expect(section.getByRole('alert')).toContainText('a number from 0 to 100')
  await section.getByLabel('Layers without a shadow (%)').fill('0')
  await section.getByRole('button', { name: 'Save' }).click()
  await expect(section.getByRole('status')).toContainText('Saved')
  await section.getByLabel('Run NPU matmuls in W8A8').check()
  await expect(section.getByRole('status')).toContainText('Saved')

  await page.reload()
  dialog = await openSettingsTab(page, 'Devices')
  await expect(dialog.getByRole('region', { name: 'Integer NPUs' }).getByLabel('Run NPU matmuls in W8A8')).toBeChecked()
  await expect(dialog.getByRole('region', { name: 'Integer NPUs' }).getByLabel('Layers without a shadow (%)')).toHaveValue('0')
  await page.keyboard.press('Escape')
  await expect(dialog).toBeHidden()

  await chooseModel(page, FAST_MODEL)
  await sendMessage(page, 'Once upon a time')
  await expect(page.getByRole('alert').filter({ hasText: 'npx tandem calibrate' })).toBeVisible({ timeout: 60_000 })

  dialog = await openSettingsTab(page, 'Devices')
  await dialog.getByRole('region', { name: 'Integer NPUs' }).getByLabel('Run NPU matmuls in W8A8').uncheck()
  await expect(dialog.getByRole('region', { name: 'Integer NPUs' }).getByRole('status')).toContainText('Saved')
  await page.keyboard.press('Escape')
  await sendMessage(page, 'Once upon a time')
  const text = await waitForReplyEnd(replies(page).last(), 60_000)
  expect(text.length).toBeGreaterThan(0)
})
