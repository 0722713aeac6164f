/**
 * @file Settings → Models in browser mode: the models found with what the loader read of them, and the catalog's
 * one model downloaded from the loopback hub the global setup runs (the shared stories260K.gguf as an LFS file).
 * The hub holds a download from the start halfway, so the progress bar is seen between 0 and 100 % whatever the
 * machine's speed; it is paused there (its bytes kept), resumed with a range request to the end, installed, picked in
 * the header and chatted with, then deleted from Settings; downloaded again, it is cancelled halfway (its bytes
 * deleted) and offered for download again. Nothing is timed. Afterwards the default model is put
 * back and Tandem's own models folder (the global setup's missing one) removed, for the specs that run later.
 * A model file added by its path: a truncated one is refused with the loader's reason, a whole one listed and removed.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Locator, Page } from '@playwright/test'
import { TINY_MODEL } from '../helpers/loopback-hub'
import { sharedModel } from '../helpers/paths'
import { e2eEnv, E2E_ENV } from './env'
import { expect, test } from './fixtures'
import { callApi, chooseModel, expectNoViolations, LONG_MODEL, openApp, openSettingsTab, replies, saveScreenshot, sendMessage, setChatSampling, waitForReplyEnd, withRequest } from './helpers'

test.describe.configure({ mode: 'serial' })

/** The default model when the spec started, put back after it. */
let originalDefault: string | null = null
/** model files to add */
const scratch = mkdtempSync(join(tmpdir(), 'tandem-e2e-files-'))

test.beforeAll(async ({ playwright }) => {
  const settings = await withRequest(playwright, (request) => callApi(request, 'settings/get', []))
  const id = typeof settings === 'object' && settings !== null && 'defaultModelId' in settings ? settings.defaultModelId : null
  originalDefault = typeof id === 'string' ? id : null
})

test.afterAll(async ({ playwright }) => {
  await withRequest(playwright, (request) => callApi(request, 'settings/update', [{ defaultModelId: originalDefault }]))
  // the downloaded model (or what a failed run left) goes with the folder, which other specs expect to be missing
  rmSync(e2eEnv(E2E_ENV.missingModelsDir), { recursive: true, force: true })
  rmSync(scratch, { recursive: true, force: true })
})

/** Opens Settings → Models once the models found are listed; returns the dialog. */
async function openSettings(page: Page): Promise<Locator> {
  const dialog = await openSettingsTab(page, 'Models')
  await expect(dialog.getByRole('list', { name: 'Models found' })).toBeVisible()
  return dialog
}

/** The progress bar's value (percent), as the page shows it. */
async function percent(bar: Locator): Promise<number> {
  return Number((await bar.getAttribute('value')) ?? 'NaN')
}

test('the models found show what the loader read; a catalog model downloads with a progress bar, pauses, resumes, is picked and chatted with, and is deleted', async ({ page }, testInfo) => {
  test.setTimeout(120_000)
  await openApp(page)
  let dialog = await openSettings(page)
  const found = dialog.getByRole('list', { name: 'Models found' })
  const shared = found.getByRole('listitem').filter({ hasText: LONG_MODEL }).first()
  await expect(shared).toContainText('GGUF · llama · 293K parameters · F32 · 1.2 MB')
  await expect(shared).toContainText('no chat template')
  await expect(shared).toContainText('In a models folder')

  const entry = dialog.getByRole('list', { name: 'Model catalog' }).getByRole('listitem').filter({ hasText: TINY_MODEL.name })
  await expect(entry).toContainText('293K parameters · F32 · 1.2 MB download · needs 16 MB of memory · MIT')
  await entry.getByRole('button', { name: `Download ${TINY_MODEL.name}` }).click()

  // the hub sends half the file and waits: the bar stands between 0 and 100 %
  const bar = entry.getByRole('progressbar', { name: `Downloading ${TINY_MODEL.name}` })
  await expect.poll(() => percent(bar)).toBeGreaterThan(0)
  expect(await percent(bar)).toBeLessThan(100)
  await expect(entry).toContainText(/\d+% · [\d.]+ (KB|MB) of 1\.2 MB/)
  await entry.getByRole('button', { name: `Pause ${TINY_MODEL.name}` }).click()
  await expect(entry).toContainText('Paused: ')
  const kept = await percent(bar)
  expect(kept).toBeGreaterThan(0)
  expect(kept).toBeLessThan(100)
  await expect(found.getByRole('listitem').filter({ hasText: TINY_MODEL.fileName })).toHaveCount(0)

  // paused, at 400 px wide, light and dark: nothing violates WCAG A/AA
  await page.setViewportSize({ width: 400, height: 800 })
  await entry.scrollIntoViewIfNeeded()
  await expectNoViolations(page, 'Settings → Models with a paused download')
  await saveScreenshot(page, testInfo, 'settings-models-paused-400')
  await page.setViewportSize({ width: 1280, height: 800 })

  await entry.getByRole('button', { name: `Resume ${TINY_MODEL.name}` }).click()
  await expect(entry.getByText('Installed')).toBeVisible()
  await expect(bar).toHaveCount(0)
  const row = found.getByRole('listitem').filter({ hasText: TINY_MODEL.fileName })
  await expect(row).toContainText("In Tandem's models folder")
  await expect(row).toContainText('GGUF · llama · 293K parameters')
  await row.scrollIntoViewIfNeeded()
  await page.emulateMedia({ colorScheme: 'dark' })
  await saveScreenshot(page, testInfo, 'settings-models-installed-dark')
  await page.emulateMedia({ colorScheme: 'light' })
  await dialog.getByRole('button', { name: 'Close' }).click()

  // the new model is in the header's picker, and answers
  await page.getByRole('button', { name: 'New chat' }).click()
  await chooseModel(page, TINY_MODEL.fileName)
  await setChatSampling(page, { temperature: 0, maxTokens: 16 })
  await sendMessage(page, 'Once upon a time')
  expect(await waitForReplyEnd(replies(page).last())).toBe('complete')

  // deleted from Settings after a confirmation: gone from the list and from the disk, downloadable again
  dialog = await openSettings(page)
  await found.getByRole('button', { name: `Delete ${TINY_MODEL.fileName}…` }).click()
  const confirm = dialog.getByRole('group', { name: `Delete ${TINY_MODEL.fileName}` })
  await expect(confirm).toContainText('from the disk?')
  await confirm.getByRole('button', { name: 'Delete from disk' }).click()
  await expect(row).toHaveCount(0)
  await expect(entry.getByRole('button', { name: `Download ${TINY_MODEL.name}` })).toBeVisible()

  // downloaded again (the hub holds it halfway) and cancelled while it runs, after a confirmation: available again
  await entry.getByRole('button', { name: `Download ${TINY_MODEL.name}` }).click()
  await expect.poll(() => percent(bar)).toBeGreaterThan(0)
  await entry.getByRole('button', { name: `Cancel the download of ${TINY_MODEL.name}…` }).click()
  const discard = dialog.getByRole('group', { name: `Cancel the download of ${TINY_MODEL.name}` })
  await expect(discard).toContainText('Downloading it again starts from the beginning.')
  await discard.getByRole('button', { name: 'Discard download' }).click()
  await expect(entry.getByRole('button', { name: `Download ${TINY_MODEL.name}` })).toBeVisible()
  await expect(bar).toHaveCount(0)
  await expect(entry).toHaveAttribute('data-state', 'available')
})

test('a model file added by its path: a truncated one is refused with the reason, a whole one is listed and removed', async ({ page }) => {
  const whole = join(scratch, 'added-model.gguf')
  copyFileSync(sharedModel('stories260K/stories260K.gguf'), whole)
  const truncated = join(scratch, 'truncated-model.gguf')
  writeFileSync(truncated, readFileSync(whole).subarray(0, 600_000))
  await openApp(page)
  const dialog = await openSettings(page)
  const field = dialog.getByRole('textbox', { name: 'Model file path' })
  const found = dialog.getByRole('list', { name: 'Models found' })

  await field.fill(truncated)
  await dialog.getByRole('button', { name: 'Add model file' }).click()
  await expect(dialog.getByRole('alert')).toContainText('truncated-model.gguf cannot be used: ')
  await expect(field).toHaveValue(truncated)
  await expect(found.getByRole('listitem').filter({ hasText: 'truncated-model.gguf' })).toHaveCount(0)

  await field.fill(whole)
  await dialog.getByRole('button', { name: 'Add model file' }).click()
  const row = found.getByRole('listitem').filter({ hasText: 'added-model.gguf' })
  await expect(row).toContainText(`Added file: ${whole}`)
  await expect(row).toContainText('GGUF · llama · 293K parameters')
  await expect(field).toHaveValue('')
  await row.getByRole('button', { name: 'Remove added-model.gguf from the list' }).click()
  await expect(row).toHaveCount(0)
})
