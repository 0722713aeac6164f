/**
 * @file Starting a worker thread whose entry is a sibling module of the caller, from source or built.
 * From source (`.ts`: tests, the tsx CLI) the worker must load TypeScript, and Node 20 ignores
 * `--import tsx/esm` in a Worker's execArgv for the entry module ("Unknown file extension .ts"), so a
 * two-line eval bootstrap registers tsx's ESM hooks in the worker and then imports the entry. Built
 * (`.js`, electron-vite), every worker entry is its own output file beside the bundle and starts directly.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads'

/**
 * The URL of worker entry `stem` beside the calling module: `<stem>.ts` when the caller runs from source
 * (its `import.meta.url` ends in .ts), `<stem>.js` when built (the bundle's workers sit beside it).
 */
export function workerEntryUrl(callerUrl: string, stem: string): URL {
  return new URL(`./${stem}${callerUrl.endsWith('.ts') ? '.ts' : '.js'}`, callerUrl)
}

/** Starts `entry` (a `.ts` entry through the tsx bootstrap, anything else directly) with `workerData`. */
export function startWorkerThread(entry: URL, workerData: unknown, options: Omit<WorkerOptions, 'eval' | 'workerData'> = {}): Worker {
  if (entry.pathname.endsWith('.ts')) {
    const tsxApi = import.meta.resolve('tsx/esm/api')
    const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}) })`
    return new Worker(bootstrap, { ...options, eval: true, workerData })
  }
  return new Worker(entry, { ...options, workerData })
}
