/**
 * @file Settings → Devices → Provider libraries, as a user with an NPU laptop adds a vendor's library: a path
 * that is not there and a file that is not a provider library are refused with the reason; the virtual NPU's
 * library (built by the global setup, standing in for VitisAI/OpenVINO/QNN) loads, is listed with its execution
 * provider, brings an NPU device labelled as a software test provider, and is still there after a reload (it is
 * stored in SQLite). It is removed at the end; its device stays until the server restarts, which the page says.
 */
import { existsSync } from 'node:fs'
import type { Locator } from '@playwright/test'
import { expect, test } from './fixtures'
import { e2eEnv, E2E_ENV } from './env'
import { openApp, openSettingsTab } from './helpers'

test.describe.configure({ mode: 'serial' })

const VIRTUAL_NPU_NAME = 'Virtual NPU (test provider, runs on the CPU)'

async function addLibrary(dialog: Locator, name: string, path: string, options = ''): Promise<void> {
  const form = dialog.getByRole('form', { name: 'Add a provider library' })
  await form.getByLabel('Library name').fill(name)
  await form.getByLabel('Library file path').fill(path)
  await form.getByLabel('Provider options').fill(options)
  await form.getByRole('button', { name: 'Add a provider library' }).click()
}

test('a provider library is checked by loading it, kept across reloads, and brings its NPU', async ({ page }) => {
  const npuLibrary = process.env[E2E_ENV.virtualNpu] ?? ''
  test.skip(npuLibrary === '', 'no C++ compiler under TANDEM_SKIP_SYSTEM_TESTS=1: the virtual NPU was not built')
  test.setTimeout(120_000)
  await openApp(page)
  let dialog = await openSettingsTab(page, 'Devices')
  const libraries = dialog.getByRole('list', { name: 'Provider libraries' })
  await expect(libraries).toContainText('No provider libraries added.')

  await addLibrary(dialog, 'missing', '/nonexistent/libonnxruntime_providers_vitisai.so')
  await expect(dialog.getByRole('alert')).toContainText('no file at /nonexistent/libonnxruntime_providers_vitisai.so')

  const libc = ['/lib/x86_64-linux-gnu/libc.so.6', '/lib/aarch64-linux-gnu/libc.so.6'].find((p) => existsSync(p))
  if (libc !== undefined) {
    await addLibrary(dialog, 'not-a-provider', libc)
    await expect(dialog.getByRole('alert')).toContainText('CreateEpFactories')
  }

  await addLibrary(dialog, 'virtual-npu', npuLibrary, 'launch_us')
  await expect(dialog.getByRole('alert')).toContainText('Write each option as name=value')
  await addLibrary(dialog, 'virtual-npu', npuLibrary, 'launch_us=100, gops=4000')
  const row = libraries.locator('[data-provider="virtual-npu"]')
  await expect(row).toContainText('TandemVirtualNPU', { timeout: 60_000 })
  await expect(row).toContainText('launch_us=100, gops=4000')
  const npuRow = dialog.getByRole('list', { name: 'Devices' }).locator('li', { hasText: VIRTUAL_NPU_NAME })
  await expect(npuRow).toBeVisible({ timeout: 60_000 })
  await expect(npuRow).toContainText('Software')
  await expect(npuRow).toContainText('NPU')

  // stored: a reload (a new page, the same server) lists it again
  await page.reload()
  dialog = await openSettingsTab(page, 'Devices')
  await expect(dialog.getByRole('list', { name: 'Provider libraries' }).locator('[data-provider="virtual-npu"]')).toContainText('TandemVirtualNPU')
  await expect(dialog.getByRole('list', { name: 'Provider libraries' }).locator('[data-provider="virtual-npu"]')).toContainText('launch_us=100, gops=4000')

  await dialog.getByRole('button', { name: 'Remove provider library virtual-npu' }).click()
  await expect(dialog.getByRole('list', { name: 'Provider libraries' })).toContainText('No provider libraries added.')
  await expect(dialog).toContainText('Its devices stay listed until Tandem restarts.')
  expect(e2eEnv(E2E_ENV.url)).not.toBe('')
})
