/**
 * @file `tandem serve`: the app in a browser. Builds the renderer when out/renderer is missing (first run
 * after `npm ci`), starts the services and the HTTP host on 127.0.0.1, prints the page URL with its
 * per-launch token as one line on stdout, and on SIGINT/SIGTERM closes connections (stopping generations),
 * the model and the database before exiting.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { LOOPBACK_ADDRESSES, startHttpHost, startLocalApi } from '../server'
import { createApp, findSourceRoot, tokenDelay } from '../services'
import { providerOptions, type ServeArgs } from './args'

/** The checkout (or installed package) root: the folder with the tandem package.json. */
function packageRoot(): string {
  return findSourceRoot(import.meta.dirname) ?? resolve(import.meta.dirname, '..', '..')
}

/** Runs a command to completion with its output on our stderr; resolves to its exit code. */
function run(command: string, args: readonly string[], cwd: string): Promise<number> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', process.stderr, process.stderr] })
    child.on('error', () => resolvePromise(1))
    child.on('exit', (code) => resolvePromise(code ?? 1))
  })
}

/** Builds out/renderer with electron-vite (the same build `npm run build` does). */
async function buildRenderer(root: string): Promise<void> {
  const require = createRequire(import.meta.url)
  const cli = join(dirname(require.resolve('electron-vite/package.json')), 'bin', 'electron-vite.js')
  process.stderr.write('tandem: building the user interface (first run; takes a few seconds)…\n')
  const code = await run(process.execPath, [cli, 'build'], root)
  if (code !== 0) throw new Error(`building the user interface failed (electron-vite build exited with ${code})`)
}

/** Opens `url` in the system browser; failures are reported, not fatal (the URL is printed anyway). */
function openBrowser(url: string): void {
  const [command, args] =
    process.platform === 'win32'
      ? ['cmd', ['/c', 'start', '""', url]]
      : process.platform === 'darwin'
        ? ['open', [url]]
        : ['xdg-open', [url]]
  try {
    const child = spawn(command, args, { detached: true, stdio: 'ignore' })
    child.on('error', () => process.stderr.write('tandem: could not open a browser; open the address above yourself\n'))
    child.unref()
  } catch {
    process.stderr.write('tandem: could not open a browser; open the address above yourself\n')
  }
}

/** Resolves with the signal's name on the first SIGINT or SIGTERM. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolvePromise) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      resolvePromise(signal)
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  })
}

/** Runs the browser-mode app until SIGINT/SIGTERM; returns the exit code. */
export async function serve(args: ServeArgs): Promise<number> {
  const root = packageRoot()
  const staticDir = join(root, 'out', 'renderer')
  if (!existsSync(join(staticDir, 'index.html'))) await buildRenderer(root)
  const app = createApp({
    dataDir: args.dataDir,
    modelDirs: args.models,
    providers: providerOptions(args.providers),
    localApiStarter: startLocalApi,
    ...(args.tokenDelayMs > 0 && { pace: tokenDelay(args.tokenDelayMs) })
  })
  let host
  try {
    if (args.api !== null) {
      if (!LOOPBACK_ADDRESSES.includes(args.api.address)) {
        process.stderr.write(`tandem: WARNING: the API listens on ${args.api.address}: other machines that can reach it can use your models with the key\n`)
      }
      const api = await app.localApi.startRun(args.api)
      if (api.url === null) throw new Error(api.problem ?? 'the OpenAI-compatible API did not start')
    }
    host = await startHttpHost({ dispatch: app.dispatch, port: args.port, staticDir })
  } catch (err) {
    await app.dispose()
    throw err
  }
  const stopped = untilSignal()
  process.stderr.write(`tandem: data in ${app.paths.dataDir}\n`)
  for (const folder of app.models.folders()) {
    process.stderr.write(`tandem: models folder ${folder.path}${folder.exists ? '' : ' (missing)'}\n`)
  }
  process.stdout.write(`Tandem is running at ${host.launchUrl}\n`)
  const api = app.localApi.view()
  if (api.url !== null) process.stdout.write(`OpenAI-compatible API: ${api.url} (key: ${api.key})\n`)
  process.stderr.write('tandem: press Ctrl+C to stop\n')
  if (args.open) openBrowser(host.launchUrl)
  const signal = await stopped
  process.stderr.write(`tandem: ${signal} received, shutting down…\n`)
  await host.close()
  await app.dispose()
  process.stderr.write('tandem: stopped\n')
  return 0
}
