/** @file The Api instance for the component tree, provided once by App (Electron preload or HTTP client). */
import { createContext, useContext } from 'react'
import type { Api } from '../../../preload/api'

/** Holds the Api; null only outside the provider (a programming error). */
export const ApiContext = createContext<Api | null>(null)

/** The Api from the nearest provider. */
export function useApi(): Api {
  const api = useContext(ApiContext)
  if (api === null) throw new Error('useApi() outside <ApiContext.Provider>')
  return api
}
