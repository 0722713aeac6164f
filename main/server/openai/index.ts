/** @file The local OpenAI-compatible API's public face. */
export { DEFAULT_MAX_QUEUE, LOOPBACK_ADDRESSES, RETRY_AFTER_SECONDS, startLocalApi, startOpenAiHost, type OpenAiBackend, type OpenAiHost, type OpenAiHostOptions } from './host'
export { OpenAiError, toOpenAiError } from './errors'
export { DEFAULT_MAX_TOKENS, MAX_MESSAGES, MAX_STOP_SEQUENCES } from './requests'
