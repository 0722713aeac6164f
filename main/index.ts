/**
 * @file Electron entry, kept thin: one hardened window that loads the built renderer, and the IPC handlers
 * behind `Api` (preload/api.ts). Engine, store, services and server stay plain Node and are wired here later.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { app, BrowserWindow, ipcMain, session, shell, type IpcMainInvokeEvent } from 'electron'

// Built layout (electron-vite): out/main/index.js, out/preload/index.cjs, out/renderer/index.html.
const PRELOAD_PATH = join(import.meta.dirname, '..', 'preload', 'index.cjs')
const RENDERER_HTML_PATH = join(import.meta.dirname, '..', 'renderer', 'index.html')
const RENDERER_URL = pathToFileURL(RENDERER_HTML_PATH).href

/** Same policy as the meta tag in renderer/index.html (which cannot carry frame-ancestors). Nothing remote. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'"
].join('; ')

/** Schemes handed to the OS (browser, mail client) instead of being opened inside the app. */
const EXTERNAL_SCHEMES = new Set(['https:', 'http:', 'mailto:'])

let mainWindow: BrowserWindow | null = null

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

/** Only our own renderer page may call IPC handlers. */
function assertTrustedSender(event: IpcMainInvokeEvent): void {
  const frameUrl = event.senderFrame?.url ?? ''
  if (frameUrl !== RENDERER_URL) throw new Error(`IPC from untrusted frame: ${frameUrl || '(gone)'}`)
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

function registerIpc(): void {
  ipcMain.handle('app:version', (event) => {
    assertTrustedSender(event)
    return app.getVersion()
  })
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

  void app.whenReady().then(() => {
    hardenSession()
    registerIpc()
    mainWindow = createWindow()
    app.on('activate', () => {
      if (BrowserWindow.getAllWindows().length === 0) mainWindow = createWindow()
    })
  })
}
