/**
 * @file Where the UI gets its `Api`: `window.tandem` inside Electron (the preload bridge), otherwise the
 * HTTP client of `tandem serve`. The access token arrives once in the page URL (`?token=`); it is moved to
 * sessionStorage (so a reload keeps working in this tab) and removed from the address bar and history.
 */
import type { Api } from '../../../preload/api'
import { createHttpApi } from './http-api'

export { ApiCallError, createHttpApi } from './http-api'

/** sessionStorage key of the browser-mode access token. */
const TOKEN_STORAGE_KEY = 'tandem.token'

let cached: Api | null = null

/** Takes the token from the URL (removing it there) or from this tab's storage; '' when there is none. */
function takeToken(): string {
  const url = new URL(window.location.href)
  const fromUrl = url.searchParams.get('token')
  if (fromUrl !== null) {
    url.searchParams.delete('token')
    window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`)
    try {
      window.sessionStorage.setItem(TOKEN_STORAGE_KEY, fromUrl)
    } catch {
      // storage disabled: the token lives only as long as this page
    }
    return fromUrl
  }
  try {
    return window.sessionStorage.getItem(TOKEN_STORAGE_KEY) ?? ''
  } catch {
    return ''
  }
}

/** The app API for this page (created once). */
export function getApi(): Api {
  cached ??= window.tandem ?? createHttpApi(window.location.origin, takeToken())
  return cached
}
