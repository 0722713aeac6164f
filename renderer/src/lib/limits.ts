/**
 * @file The Api limits as renderer values. The renderer may import only types from preload/api.ts, so this
 * mirrors `API_LIMITS`; the `typeof API_LIMITS` annotation (literal types, `as const` there) makes the type
 * check fail the moment the two drift apart.
 */
import type { API_LIMITS } from '../../../preload/api'

/** Same values as API_LIMITS in preload/api.ts. */
export const LIMITS: typeof API_LIMITS = {
  maxMessageChars: 1_000_000,
  maxTitleChars: 500,
  maxSystemPromptChars: 100_000,
  maxSearchChars: 500,
  maxPathChars: 4096,
  maxIdChars: 200,
  maxModelFolders: 64,
  maxTemperature: 2,
  maxReplyTokens: 32_768
}
