/**
 * @file The OpenAI-compatible API of the real server (`tandem serve --api`, started by the global setup), used with
 * the official `openai` client the way another tool on the laptop would: it lists the models, streams a chat
 * completion, and the app's live device view shows the request's tokens/s while it streams (the API runs on the
 * app's engine and queue). The server paces tokens (E2E_TOKEN_DELAY_MS), so the stream lasts long enough to be seen
 * on any machine.
 */
import OpenAI from 'openai'
import { E2E_ENV, E2E_TOKEN_DELAY_MS, e2eEnv } from './env'
import { expect, test } from './fixtures'
import { FAST_MODEL, openApp } from './helpers'

const TOKENS = 160

/** Records, in the page, the highest tokens/s the live view shows (a string: the test project has no DOM types). */
const TOKENS_RECORDER = `(() => {
  window.__tandemTokens = 0
  const record = () => {
    const el = document.querySelector('#usage-panel [data-tokens-per-second]')
    const tps = Number(el === null ? 0 : el.getAttribute('data-tokens-per-second'))
    if (Number.isFinite(tps)) window.__tandemTokens = Math.max(window.__tandemTokens, tps)
  }
  new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true })
})()`

test('another tool streams from the API; the live view shows its tokens', async ({ page }) => {
  const client = new OpenAI({ baseURL: e2eEnv(E2E_ENV.apiUrl), apiKey: e2eEnv(E2E_ENV.apiKey), maxRetries: 0 })
  const models = await client.models.list()
  expect(models.data.map((m) => m.id)).toContain(FAST_MODEL)

  await openApp(page)
  const toggle = page.getByRole('button', { name: 'Device activity', exact: true })
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click()
  await expect(page.getByRole('complementary', { name: 'Device activity' })).toBeVisible()
  await page.evaluate(TOKENS_RECORDER)

  // paced by the server: at least (TOKENS − 1) × E2E_TOKEN_DELAY_MS of streaming
  const stream = await client.chat.completions.create({ model: FAST_MODEL, messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: TOKENS, temperature: 0, stream: true, stream_options: { include_usage: true } })
  let text = ''
  let completionTokens = 0
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? ''
    completionTokens = chunk.usage?.completion_tokens ?? completionTokens
  }
  expect(text.length).toBeGreaterThan(20)
  expect(completionTokens).toBeGreaterThan(10)
  expect(TOKENS * E2E_TOKEN_DELAY_MS).toBeGreaterThan(2000)
  expect(Number(await page.evaluate('window.__tandemTokens'))).toBeGreaterThan(0)

  // a wrong key is refused in OpenAI's shape
  const wrong = new OpenAI({ baseURL: e2eEnv(E2E_ENV.apiUrl), apiKey: 'wrong-key-wrong-key', maxRetries: 0 })
  await expect(wrong.models.list()).rejects.toMatchObject({ status: 401 })
})

test('Settings → Local API shows the running API, its address and the key tools need', async ({ page }) => {
  await openApp(page)
  await page.getByRole('button', { name: 'Settings', exact: true }).click()
  const dialog = page.getByRole('dialog', { name: 'Settings' })
  const section = dialog.getByRole('region', { name: 'Local API' })
  await expect(section.getByRole('checkbox', { name: 'Serve the OpenAI-compatible API' })).toBeChecked()
  await expect(section.getByLabel('API address')).toHaveText(e2eEnv(E2E_ENV.apiUrl))
  // the key is hidden until asked for
  await expect(section.getByLabel('API key')).not.toHaveText(e2eEnv(E2E_ENV.apiKey))
  await section.getByRole('button', { name: 'Show' }).click()
  await expect(section.getByLabel('API key')).toHaveText(e2eEnv(E2E_ENV.apiKey))
})
