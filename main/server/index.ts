/** @file The HTTP host's public face (browser mode, tests). */
export { HOST_ADDRESS, startHttpHost, type HttpHost, type HttpHostOptions } from './http-host'
export { MAX_BODY_BYTES, SECURITY_HEADERS, statusForError } from './http-util'
export { CONTENT_SECURITY_POLICY, resolveStaticPath } from './static-files'
