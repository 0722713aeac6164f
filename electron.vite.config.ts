/**
 * @file electron-vite build for the top-level main/, preload/, renderer/ layout (toolchain notes G2).
 * Output: out/main/index.js (ESM, plus the engine worker once it exists), out/preload/index.cjs (CommonJS,
 * because a sandboxed preload cannot be an ES module), out/renderer/index.html + assets.
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'electron-vite'

const root = import.meta.dirname

/** Main-process entries by output name; the engine worker is a separate file that worker_threads loads by path. */
const mainEntries: Record<string, string> = { index: resolve(root, 'main/index.ts') }
const workerEntry = resolve(root, 'main/engine/runtime/worker.ts')
if (existsSync(workerEntry)) mainEntries.worker = workerEntry

export default defineConfig({
  main: {
    build: { lib: { entry: mainEntries } }
  },
  preload: {
    build: {
      lib: { entry: resolve(root, 'preload/index.ts'), formats: ['cjs'] },
      rollupOptions: { output: { entryFileNames: '[name].cjs' } }
    }
  },
  renderer: {
    root: resolve(root, 'renderer'),
    build: { rollupOptions: { input: resolve(root, 'renderer/index.html') } },
    plugins: [react()]
  }
})
