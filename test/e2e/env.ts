/** @file Environment variables the global setup hands to the tests (Playwright workers inherit its env). */

/** Variable names. */
export const E2E_ENV = {
  /** launch URL of the server under test, with its token */
  url: 'TANDEM_E2E_URL',
  /** the server's OpenAI-compatible API (`tandem serve --api`): its base URL and key */
  apiUrl: 'TANDEM_E2E_API_URL',
  apiKey: 'TANDEM_E2E_API_KEY',
  /** the server's data folder (holds the SQLite file) */
  dataDir: 'TANDEM_E2E_DATA_DIR',
  /** the built-in models folder that deliberately does not exist */
  missingModelsDir: 'TANDEM_E2E_MISSING_MODELS_DIR',
  /** the virtual NPU provider library, built by the global setup ('' where no compiler may be had) */
  virtualNpu: 'TANDEM_E2E_VIRTUAL_NPU'
} as const

/** A variable set by the global setup; throws when the tests run without it. */
export function e2eEnv(name: (typeof E2E_ENV)[keyof typeof E2E_ENV]): string {
  const value = process.env[name]
  if (value === undefined || value === '') throw new Error(`${name} is not set: run the tests through playwright.config.ts (global setup)`)
  return value
}

/**
 * The server waits this long before each generated token after the first (`tandem serve --token-delay-ms`).
 * The tiny test models write ~2000 tokens/s here, so an unpaced reply could end before a test sees it grow,
 * presses Stop or reads the live view; paced, a reply of n tokens streams for at least (n − 1) × 20 ms on any
 * machine, however fast (the specs size their replies from this), and the model still runs at full speed
 * between tokens.
 */
export const E2E_TOKEN_DELAY_MS = 20
