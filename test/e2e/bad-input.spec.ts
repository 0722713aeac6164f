/**
 * @file Bad input and broken setups: an empty message, a 200,000-character message, model folders that are
 * missing or vanish under a conversation, and a corrupt model file. Each must give a clear message and lose
 * nothing the user typed.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { expect, test } from './fixtures'
import { e2eEnv, E2E_ENV } from './env'
import { chooseModel, composer, FAST_MODEL, openApp, openSettingsTab, replies, sendMessage, userMessages, waitForReplyEnd } from './helpers'

test.describe.configure({ mode: 'serial' })

const sharedModels = process.env.TANDEM_TEST_MODELS ?? resolve(import.meta.dirname, '..', '..', '..', 'shared', 'models')

/** A scratch folder for model folders these tests create and remove. */
let scratch = ''
test.beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'tandem-e2e-folders-'))
})
test.afterAll(() => {
  rmSync(scratch, { recursive: true, force: true })
})

test('an empty message is not sent and says why', async ({ page }) => {
  await openApp(page)
  await composer(page).fill('   ')
  await composer(page).press('Enter')
  await expect(page.getByRole('status').filter({ hasText: 'Type a message first.' })).toBeVisible()
  // Send is marked disabled for assistive technology, and a click still explains instead of doing nothing.
  const send = page.getByRole('button', { name: 'Send message' })
  await expect(send).toBeDisabled()
  await composer(page).fill('')
  await expect(page.getByText('Type a message first.')).toHaveCount(0)
  await send.click({ force: true })
  await expect(page.getByText('Type a message first.')).toBeVisible()
  await expect(page.getByRole('article')).toHaveCount(0)
  await expect(page.getByRole('heading', { name: 'Start a conversation' })).toBeVisible()
})

test('a 200,000-character message is kept and the error says what to do', async ({ page }) => {
  await openApp(page)
  await chooseModel(page, FAST_MODEL)
  const huge = 'word '.repeat(40_000)
  expect(huge.length).toBe(200_000)
  await sendMessage(page, huge)

  const alert = page.getByRole('alert').filter({ hasText: 'Too long for this model' })
  await expect(alert).toBeVisible()
  await expect(alert).toContainText('Shorten the message')
  // The message itself is saved (shown collapsed) and the failed reply says why.
  const message = userMessages(page).first()
  await expect(message.getByRole('button', { name: 'Show all (200,000 characters)' })).toBeVisible()
  expect(await waitForReplyEnd(replies(page).first())).toBe('error')
  await expect(replies(page).first()).toContainText('too long')

  // Nothing lost: after a reload the full text is still there.
  await page.reload()
  await expect(message.getByRole('button', { name: 'Show all (200,000 characters)' })).toBeVisible()
  await message.getByRole('button', { name: 'Show all (200,000 characters)' }).click()
  const text = (await message.locator('.user-text').textContent()) ?? ''
  expect(text.length).toBe(huge.length)
})

test('model folders: the missing built-in folder is flagged, a bad path is refused, a folder can be added and removed', async ({ page }) => {
  await openApp(page)
  const dialog = await openSettingsTab(page, 'Models')
  const missing = e2eEnv(E2E_ENV.missingModelsDir)
  const missingRow = dialog.getByRole('listitem').filter({ hasText: missing })
  await expect(missingRow).toContainText('Missing: folder not found')

  const pathField = dialog.getByRole('textbox', { name: 'Folder path' })
  const bad = join(scratch, 'does-not-exist')
  await pathField.fill(bad)
  await dialog.getByRole('button', { name: 'Add folder' }).click()
  await expect(dialog.getByRole('alert')).toContainText('Folder not found')
  await expect(pathField).toHaveValue(bad) // kept, so it can be corrected

  const good = join(scratch, 'extra-models')
  mkdirSync(good)
  await pathField.fill(good)
  await dialog.getByRole('button', { name: 'Add folder' }).click()
  await expect(dialog.getByRole('listitem').filter({ hasText: good })).toBeVisible()
  await expect(pathField).toHaveValue('')
  await dialog.getByRole('button', { name: `Remove folder ${good}` }).click()
  await expect(dialog.getByRole('listitem').filter({ hasText: good })).toHaveCount(0)
  await dialog.getByRole('button', { name: 'Close' }).click()
  await expect(dialog).toBeHidden()
})

test('a corrupt model file is listed as unusable with the reason', async ({ page }) => {
  const folder = join(scratch, 'corrupt-models')
  mkdirSync(folder)
  writeFileSync(join(folder, 'broken.gguf'), Buffer.from('GGUF this is not a real model file'))
  await openApp(page)
  const dialog = await openSettingsTab(page, 'Models')
  await dialog.getByRole('textbox', { name: 'Folder path' }).fill(folder)
  await dialog.getByRole('button', { name: 'Add folder' }).click()
  const row = dialog.getByRole('list', { name: 'Models found' }).getByRole('listitem').filter({ hasText: 'broken.gguf' })
  await expect(row).toContainText('Cannot be used')
  await dialog.getByRole('button', { name: 'Close' }).click()
  // In the picker it is there but cannot be chosen.
  const option = page.getByRole('combobox', { name: 'Model', exact: true }).locator('option', { hasText: 'broken.gguf' })
  await expect(option).toBeDisabled()
  await expect(option).toContainText('unusable')
})

test('a model folder that disappears: the error says what to do and the message is kept', async ({ page }) => {
  const folder = join(scratch, 'vanishing-models')
  mkdirSync(folder)
  copyFileSync(join(sharedModels, 'stories260K', 'stories260K.bin'), join(folder, 'vanishing.bin'))
  copyFileSync(join(sharedModels, 'stories260K', 'tok512.bin'), join(folder, 'tok512.bin'))
  await openApp(page)
  let dialog = await openSettingsTab(page, 'Models')
  await dialog.getByRole('textbox', { name: 'Folder path' }).fill(folder)
  await dialog.getByRole('button', { name: 'Add folder' }).click()
  await expect(dialog.getByRole('listitem').filter({ hasText: 'vanishing.bin' })).toBeVisible()
  await dialog.getByRole('button', { name: 'Close' }).click()

  await page.getByRole('button', { name: 'New chat' }).click()
  await chooseModel(page, 'vanishing.bin')
  rmSync(folder, { recursive: true, force: true })
  await sendMessage(page, 'Where did the model go?')

  const alert = page.getByRole('alert').filter({ hasText: 'No model available' })
  await expect(alert).toBeVisible()
  await expect(alert).toContainText('not available any more')
  await expect(userMessages(page).first()).toHaveText('Where did the model go?')
  // the button opens Settings where the problem is: the Models tab, with the folder flagged
  await alert.getByRole('button', { name: 'Open Settings' }).click()
  dialog = page.getByRole('dialog', { name: 'Settings' })
  await expect(dialog.getByRole('tab', { name: 'Models' })).toHaveAttribute('aria-selected', 'true')
  await expect(dialog.getByRole('listitem').filter({ hasText: folder })).toContainText('Missing: folder not found')
})
