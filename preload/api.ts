/**
 * @file The one contract between the renderer and the app: the `Api` the preload exposes as `window.tandem`.
 * Types only and zero imports, so the renderer's TypeScript project can include it without seeing Node or Electron.
 */

/** Everything the renderer may ask of the app; every call is async because it crosses a process boundary. */
export interface Api {
  /** The app version from package.json, e.g. `0.1.0`. */
  version(): Promise<string>
}
