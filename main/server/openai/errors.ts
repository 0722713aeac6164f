/**
 * @file Errors in OpenAI's shape — `{ "error": { "message", "type", "param", "code" } }` with its status codes — so
 * clients written for OpenAI's API show them as they would OpenAI's. The app's own error names map onto them.
 */
import type { ServerResponse } from 'node:http'
import { toApiError } from '../../services'
import { sendJson, statusForError } from '../http-util'

/** OpenAI's error types. */
export type OpenAiErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'rate_limit_error' | 'server_error'

/** An error answered in OpenAI's shape. */
export class OpenAiError extends Error {
  constructor(
    readonly status: number,
    readonly type: OpenAiErrorType,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null
  ) {
    super(message)
  }

  /** The JSON body OpenAI's clients read. */
  body(): { error: { message: string; type: OpenAiErrorType; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } }
  }
}

/** Any thrown value as an OpenAiError: the app's errors keep their message and get the status the app gives them. */
export function toOpenAiError(err: unknown): OpenAiError {
  if (err instanceof OpenAiError) return err
  const e = toApiError(err)
  const status = statusForError(e.name)
  const type: OpenAiErrorType = status === 404 ? 'not_found_error' : status >= 500 ? 'server_error' : 'invalid_request_error'
  const code = e.name === 'ContextOverflowError' ? 'context_length_exceeded' : e.name === 'NoModelError' ? 'model_not_found' : null
  return new OpenAiError(status, type, e.message, null, code)
}

/** Answers `error` as JSON (before any streamed byte). */
export function sendOpenAiError(res: ServerResponse, error: OpenAiError, headers: Record<string, string> = {}): void {
  sendJson(res, error.status, error.body(), headers)
}
