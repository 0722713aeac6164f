/**
 * @file Playwright: end-to-end tests in test/e2e (*.spec.ts) against the real app in browser mode, driven
 * with the system Chromium (no browser download). One worker: the tests share one server and one SQLite
 * file, and the machine has two cores. Screenshots and failure artifacts go to test-results/ (gitignored).
 */
import { defineConfig } from '@playwright/test'

/** Debian's Chromium; override with TANDEM_CHROMIUM. */
const CHROMIUM_PATH = process.env.TANDEM_CHROMIUM ?? '/usr/bin/chromium'

export default defineConfig({
  testDir: 'test/e2e',
  testMatch: '*.spec.ts',
  outputDir: 'test-results/e2e',
  globalSetup: './test/e2e/global-setup.ts',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: process.env.CI !== undefined,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [['list']],
  use: {
    viewport: { width: 1280, height: 800 },
    colorScheme: 'light',
    screenshot: 'only-on-failure',
    trace: 'off',
    video: 'off',
    launchOptions: {
      executablePath: CHROMIUM_PATH,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync'
      ]
    }
  }
})
