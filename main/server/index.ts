/** @file The HTTP host's public face (browser mode, tests). */
export { HEADERS_TIMEOUT_MS, HOST_ADDRESS, KEEP_ALIVE_TIMEOUT_MS, REQUEST_TIMEOUT_MS, TIMEOUT_CHECK_INTERVAL_MS, startHttpHost, type HttpHost, type HttpHostOptions, type HttpTimeouts } from './http-host'
export { MAX_BODY_BYTES, MAX_JSON_DEPTH, SECURITY_HEADERS, jsonNestsDeeperThan, statusForError } from './http-util'
export { CONTENT_SECURITY_POLICY, resolveStaticPath } from './static-files'
export { DEFAULT_MAX_QUEUE, LOOPBACK_ADDRESSES, startLocalApi, startOpenAiHost, type OpenAiBackend, type OpenAiHost, type OpenAiHostOptions } from './openai'
