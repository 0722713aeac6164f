/**
 * @file Electron entry, kept thin: one hardened window that loads the built renderer, and one IPC handler
 * per `Api` channel (preload/api.ts), each handing its arguments to the services' dispatcher, which
 * validates them. Engine, store and services stay plain Node (main/services), shared with `tandem serve`.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { app, BrowserWindow, dialog, ipcMain, safeStorage, session, shell, type IpcMainInvokeEvent } from 'electron'
import { CONTENT_SECURITY_POLICY } from './server'
import { API_METHODS, STREAM_EVENT_CHANNEL } from '../preload/api'
import { createApp, isApiChannel, type App, type DispatchOutcome, type KeySealer } from './services'
import { startLocalApi } from './server'
import { isRecord } from './common/reader'

// Built layout (electron-vite): out/main/index.js, out/preload/index.cjs, out/renderer/index.html.
const PRELOAD_PATH = join(import.meta.dirname, '..', 'preload', 'index.cjs')
const RENDERER_HTML_PATH = join(import.meta.dirname, '..', 'renderer', 'index.html')
const RENDERER_URL = pathToFileURL(RENDERER_HTML_PATH).href


/** Schemes handed to the OS (browser, mail client) instead of being opened inside the app. */
const EXTERNAL_SCHEMES = new Set(['https:', 'http:', 'mailto:'])

let mainWindow: BrowserWindow | null = null
let services: App | null = null

/** Open a link in the user's default handler, if it is a plain web or mail link. */
function openExternally(url: string): void {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return
  }
  if (EXTERNAL_SCHEMES.has(parsed.protocol)) void shell.openExternal(parsed.href)
}

/** Only our own renderer page may call IPC handlers (whatever its #route; the UI routes in the hash). */
function isTrustedSender(event: IpcMainInvokeEvent): boolean {
  try {
    const url = new URL(event.senderFrame?.url ?? '')
    url.hash = ''
    url.search = ''
    return url.href === RENDERER_URL
  } catch {
    return false
  }
}

/** The request id a stream call's first argument carries (the dispatcher validates it fully). */
function streamRequestId(args: readonly unknown[]): string {
  const first = args[0]
  return isRecord(first) && typeof first.requestId === 'string' ? first.requestId : ''
}

function createWindow(): BrowserWindow {
  const win = new BrowserWindow({
    width: 1100,
    height: 760,
    show: false,
    title: 'Tandem',
    webPreferences: {
      preload: PRELOAD_PATH,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      webviewTag: false
    }
  })
  win.once('ready-to-show', () => win.show())
  win.on('closed', () => {
    mainWindow = null
  })
  void win.loadFile(RENDERER_HTML_PATH)
  return win
}

function hardenSession(): void {
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({
      responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] }
    })
  })
  // No camera, microphone, notifications, geolocation, ... until a feature asks for one explicitly.
  session.defaultSession.setPermissionRequestHandler((_webContents, _permission, callback) => callback(false))
  session.defaultSession.setPermissionCheckHandler(() => false)
}

/** One handler per channel; replies are `{ ok, result | error }` envelopes, never rejections. */
function registerIpc(running: App): void {
  for (const channel of Object.keys(API_METHODS).filter(isApiChannel)) {
    const isStream = API_METHODS[channel] === 'stream'
    ipcMain.handle(channel, async (event, ...args: unknown[]): Promise<DispatchOutcome> => {
      if (!isTrustedSender(event)) return { ok: false, error: { name: 'ForbiddenError', message: 'IPC from an untrusted frame.' } }
      const sender = event.sender
      const controller = new AbortController()
      const onGone = (): void => controller.abort()
      sender.once('destroyed', onGone)
      const requestId = isStream ? streamRequestId(args) : ''
      try {
        return await running.dispatch(channel, args, {
          emit: (streamed) => {
            if (!sender.isDestroyed()) sender.send(STREAM_EVENT_CHANNEL, { requestId, event: streamed })
          },
          signal: controller.signal
        })
      } finally {
        sender.off('destroyed', onGone)
      }
    })
  }
}

/**
 * Other servers' keys sealed by the OS keychain (Keychain, DPAPI, libsecret/kwallet), or null where there is none:
 * on Linux without a secret service safeStorage falls back to a fixed key ('basic_text'), which is clear text in
 * all but name, so those keys stay in memory instead.
 */
function keychainSealer(): KeySealer | null {
  if (!safeStorage.isEncryptionAvailable()) return null
  if (process.platform === 'linux' && safeStorage.getSelectedStorageBackend() === 'basic_text') return null
  return { seal: (key) => safeStorage.encryptString(key), open: (sealed) => safeStorage.decryptString(Buffer.from(sealed)) }
}

/** Starts the services; on failure (e.g. an unreadable database) tells the user and quits. */
function startServices(): App | null {
  try {
    return createApp({
      appVersion: app.getVersion(),
      devRoot: app.isPackaged ? null : undefined,
      // Settings → Local API starts it here, as in browser mode
      localApiStarter: startLocalApi,
      keySealer: keychainSealer() ?? undefined,
      // a packaged app carries the catalog among its resources (electron-builder's extraResources), not beside the code
      ...(app.isPackaged && { modelCatalogFile: join(process.resourcesPath, 'model-catalog.json') })
    })
  } catch (err) {
    dialog.showErrorBox('Tandem cannot start', err instanceof Error ? err.message : String(err))
    app.quit()
    return null
  }
}

// Every web contents (windows, popups): no navigation away from the bundled page, links go to the OS.
app.on('web-contents-created', (_event, contents) => {
  contents.setWindowOpenHandler(({ url }) => {
    openExternally(url)
    return { action: 'deny' }
  })
  contents.on('will-navigate', (event, url) => {
    event.preventDefault()
    openExternally(url)
  })
  contents.on('will-redirect', (event) => event.preventDefault())
  contents.on('will-attach-webview', (event) => event.preventDefault())
})

app.enableSandbox()

if (!app.requestSingleInstanceLock()) {
  app.quit()
} else {
  app.on('second-instance', () => {
    if (mainWindow === null) return
    if (mainWindow.isMinimized()) mainWindow.restore()
    mainWindow.focus()
  })

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit()
  })

  // Stop generations, close the model and the database before the process exits.
  app.on('will-quit', (event) => {
    const running = services
    if (running === null) return
    services = null
    event.preventDefault()
    void running.dispose().finally(() => app.quit())
  })

  void app.whenReady().then(() => {
    hardenSession()
    services = startServices()
    if (services === null) return
    registerIpc(services)
    mainWindow = createWindow()
    app.on('activate', () => {
      if (BrowserWindow.getAllWindows().length === 0) mainWindow = createWindow()
    })
  })
}
