/** @file Types the one global the preload exposes; absent when the page runs outside Electron. */
import type { Api } from '../../preload/api'

declare global {
  interface Window {
    /** The app API from the preload bridge; undefined in a plain browser. */
    readonly tandem?: Api
  }
}

export {}
