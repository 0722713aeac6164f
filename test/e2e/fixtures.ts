/**
 * @file The `test` every spec uses: Playwright's, plus an automatic guard that fails a test when the page
 * throws an uncaught error or the Content Security Policy blocks something (inline style, eval, a remote
 * load). HTTP error statuses the tests provoke on purpose are not errors here.
 */
import { test as base } from '@playwright/test'

export { expect } from '@playwright/test'

/** Playwright's test with the page guard. */
export const test = base.extend<{ pageGuard: void }>({
  pageGuard: [
    async ({ page }, use) => {
      const problems: string[] = []
      page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`))
      page.on('console', (message) => {
        if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) problems.push(`CSP: ${message.text()}`)
      })
      await use()
      if (problems.length > 0) throw new Error(`the page reported problems:\n${problems.join('\n')}`)
    },
    { auto: true }
  ]
})
