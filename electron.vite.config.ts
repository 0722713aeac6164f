/**
 * @file electron-vite build for the top-level main/, preload/, renderer/ layout (toolchain notes G2).
 * Output: out/main/index.js (ESM), out/main/model-worker.js, out/main/device-worker.js, out/main/search-worker.js, out/main/header-worker.js and out/main/probe-child.js, out/preload/index.cjs (CommonJS,
 * because a sandboxed preload cannot be an ES module), out/renderer/index.html + assets.
 */
import { resolve } from 'node:path'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'electron-vite'

const root = import.meta.dirname

/**
 * Main-process entries by output name. The model worker and the per-device workers (worker_threads) and
 * the device-probe child (child_process.fork) are separate files loaded by path from beside the bundle:
 * ./model-worker.js, ./device-worker.js, ./probe-child.js.
 */
const mainEntries: Record<string, string> = {
  index: resolve(root, 'main/index.ts'),
  'model-worker': resolve(root, 'main/engine/runtime/model-worker/model-worker.ts'),
  'device-worker': resolve(root, 'main/engine/runtime/hetero/device-worker.ts'),
  'probe-child': resolve(root, 'main/engine/devices/probe-child.ts'),
  'search-worker': resolve(root, 'main/store/search-worker.ts'),
  'header-worker': resolve(root, 'main/engine/runtime/header-reader/header-worker.ts')
}

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
