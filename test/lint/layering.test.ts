/**
 * @file Proves the import-layering lint (eslint.config.js) fires: snippets are linted in memory at virtual
 * paths inside the repo, so no file is written and each rule is seen both allowing and refusing.
 */
import { join } from 'node:path'
import { ESLint } from 'eslint'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../helpers/paths'

/** The rules that implement layering; other rules (unused vars, ...) are ignored by these tests. */
const LAYERING_RULES = new Set(['no-restricted-imports', 'no-restricted-syntax', 'tandem/layer-covered', '@typescript-eslint/consistent-type-assertions'])

const eslint = new ESLint({ cwd: repoRoot })

/** Rule ids reported for `code` placed at repo-relative `path`. */
async function ruleIds(path: string, code: string): Promise<string[]> {
  const results = await eslint.lintText(code, { filePath: join(repoRoot, path) })
  const messages = results.flatMap((r) => r.messages)
  // A parse error has no ruleId; surface it instead of passing silently.
  const fatal = messages.find((m) => m.fatal === true)
  if (fatal !== undefined) throw new Error(`${path}: ${fatal.message}`)
  return messages.map((m) => m.ruleId ?? '')
}

async function layeringErrors(path: string, code: string): Promise<string[]> {
  return (await ruleIds(path, code)).filter((id) => LAYERING_RULES.has(id))
}

/** [virtual path, code] pairs the layering must accept. */
const ALLOWED: Array<[string, string]> = [
  ['main/engine/model/gguf.ts', "export { BinaryReader } from './binary-reader'"],
  ['main/engine/model/tokenizer/bpe.ts', "import type { ModelConfig } from '../types'\nexport type C = ModelConfig"],
  ['main/engine/graph/emit.ts', "export { loadModel } from '../model'"],
  ['main/engine/graph/emit.ts', "export { loadModel } from '../model/index'"],
  ['main/engine/graph/ops/matmul.ts', "export { loadModel } from '../../model'"],
  ['main/engine/devices/probe.ts', "export * from '../graph'\nexport * from '../model'"],
  ['main/engine/devices/ort.ts', "export { InferenceSession } from 'onnxruntime-node'"],
  ['main/engine/devices/ort-c/library.ts', "export { load } from 'koffi'"],
  ['main/engine/plan/solve.ts', "export * from '../devices'\nexport * from '../graph'"],
  ['main/engine/runtime/model-worker/model-worker.ts', "export * from '../plan'\nexport * from '../devices'\nexport * from '../model'"],
  ['main/engine/runtime/model-worker/model-worker.ts', "export { parentPort } from 'node:worker_threads'"],
  ['main/engine/index.ts', "export * from './model'\nexport { TextModel } from './runtime'"],
  ['main/engine/runtime/hetero/device-executor.ts', "export { KvCache } from '../session/kv-cache'\nexport * from '../usage'"],
  ['main/engine/runtime/profile/profiler.ts', "export { DeviceHost } from '../hetero/device-host'"],
  ['main/engine/runtime/model-worker/model-worker.ts', "export * from '../hetero/device-workers-engine'\nexport * from '../session/single-session-engine'"],
  ['main/engine/runtime/text-model.ts', "export * from './model-worker/model-worker-client'\nexport * from './generation/generation-loop'"],
  ['main/common/reader.ts', 'export const x = 1'],
  ['main/engine/model/x.ts', "export const KINDS = ['a', 'b'] as const"],
  ['main/engine/model/x.ts', "export { isRecord } from '../../common/reader'"],
  ['main/store/x.ts', "export { FieldReader } from '../common/reader'"],
  ['main/services/chat.ts', "export * from '../engine'\nexport * from '../store'"],
  ['main/services/chat.ts', "export type { Api } from '../../preload/api'"],
  ['main/server/http.ts', "export * from '../engine/index'\nexport * from '../services'"],
  ['main/cli/main.ts', "export * from '../engine'"],
  ['main/store/db.ts', "export { default } from 'better-sqlite3'\nexport * from './migrations'"],
  ['main/index.ts', "export { app } from 'electron'\nexport * from './engine'\nexport * from './services'"],
  ['preload/index.ts', "export { contextBridge } from 'electron'\nexport type { Api } from './api'"],
  ['preload/api.ts', 'export interface Api { version(): Promise<string> }'],
  ['renderer/src/App.tsx', "import type { Api } from '../../preload/api'\nexport const f = (a: Api) => <p>{String(a)}</p>"],
  ['renderer/src/api/http-api.ts', "import { API_METHODS, API_LIMITS } from '../../../preload/api'\nexport const m = [API_METHODS, API_LIMITS]"],
  ['main/cli/serve.ts', "export * from '../server'\nexport * from '../services'"],
  ['renderer/src/main.tsx', "export { createRoot } from 'react-dom/client'"]
]

/** [virtual path, code, rule expected to fire] triples the layering must refuse. */
const REFUSED: Array<[string, string, string]> = [
  // Engine: downward only, siblings through their index.ts, no electron, onnxruntime only in devices/ort.ts.
  ['main/engine/model/x.ts', "import { app } from 'electron'", 'no-restricted-imports'],
  ['main/engine/model/x.ts', "export * from '../graph'", 'no-restricted-imports'],
  ['main/engine/model/x.ts', "export * from '../../store'", 'no-restricted-imports'],
  ['main/engine/model/tokenizer/x.ts', "export * from '../../runtime'", 'no-restricted-imports'],
  ['main/engine/graph/x.ts', "export * from '../model/gguf'", 'no-restricted-imports'],
  ['main/engine/graph/x.ts', "import type { Placement } from '../plan'", 'no-restricted-imports'],
  ['main/engine/graph/x.ts', "export * from '../devices'", 'no-restricted-imports'],
  ['main/engine/devices/probe.ts', "export { InferenceSession } from 'onnxruntime-node'", 'no-restricted-imports'],
  ['main/engine/devices/ort-c/session.ts', "export { load } from 'koffi'", 'no-restricted-imports'],
  ['main/services/chat.ts', "export { load } from 'koffi'", 'no-restricted-imports'],
  ['main/engine/devices/probe.ts', "export * from '../plan'", 'no-restricted-imports'],
  ['main/engine/devices/probe.ts', "export * from '../graph/emit'", 'no-restricted-imports'],
  ['main/engine/plan/x.ts', "export * from '../runtime'", 'no-restricted-imports'],
  ['main/engine/runtime/x.ts', "export * from '../plan/solver'", 'no-restricted-imports'],
  ['main/engine/runtime/x.ts', "export * from '..'", 'no-restricted-imports'],
  ['main/engine/runtime/x.ts', "export * from '../index'", 'no-restricted-imports'],
  ['main/engine/runtime/x.ts', "export { default } from 'better-sqlite3'", 'no-restricted-imports'],
  // Inside runtime: the folders stack (generation, session alone; hetero on session; profile on hetero).
  ['main/engine/runtime/session/x.ts', "export * from '../hetero/device-host'", 'no-restricted-imports'],
  ['main/engine/runtime/generation/x.ts', "export * from '../model-worker/protocol'", 'no-restricted-imports'],
  ['main/engine/runtime/hetero/x.ts', "export * from '../profile/profiler'", 'no-restricted-imports'],
  ['main/engine/runtime/hetero/x.ts', "export * from '../model-worker/protocol'", 'no-restricted-imports'],
  ['main/engine/runtime/profile/x.ts', "export * from '../model-worker/model-worker-client'", 'no-restricted-imports'],
  ['main/engine/runtime/model-worker/x.ts', "export * from '../profile/profiler'", 'no-restricted-imports'],
  ['main/engine/runtime/session/x.ts', "export * from '../text-model'", 'no-restricted-imports'],
  // No type assertions on anything in main/, preload/ or renderer/ (house rule 12): data is read, not asserted.
  ['main/services/x.ts', 'export const n = JSON.parse("1") as number', '@typescript-eslint/consistent-type-assertions'],
  ['renderer/src/x.ts', 'export const el = document.body as unknown as string', '@typescript-eslint/consistent-type-assertions'],
  // main/common is the bottom: it imports nothing of main/ and no Node built-ins.
  ['main/common/x.ts', "export * from '../store'", 'no-restricted-imports'],
  ['main/common/x.ts', "export { readFileSync } from 'node:fs'", 'no-restricted-imports'],
  ['main/engine/index.ts', "export * from '../store'", 'no-restricted-imports'],
  ['main/engine/index.ts', "export { TextModel } from './runtime/text-model'", 'no-restricted-imports'],
  ['main/engine/index.ts', "export * from 'electron'", 'no-restricted-imports'],
  // Outside the engine: only main/engine/index.ts.
  ['main/services/chat.ts', "export * from '../engine/model/gguf'", 'no-restricted-imports'],
  ['main/cli/main.ts', "export * from '../engine/runtime/generate'", 'no-restricted-imports'],
  ['main/server/http.ts', "export * from '../engine/model'", 'no-restricted-imports'],
  ['main/index.ts', "export * from './engine/model'", 'no-restricted-imports'],
  // electron only in main/index.ts and preload/index.ts.
  ['main/services/chat.ts', "import { app } from 'electron'", 'no-restricted-imports'],
  ['main/server/http.ts', "export * from 'electron/main'", 'no-restricted-imports'],
  ['main/cli/main.ts', "export * from 'electron'", 'no-restricted-imports'],
  ['preload/bridge.ts', "export * from 'electron'", 'no-restricted-imports'],
  // services below server and cli; server goes through services; SQL only in store.
  ['main/services/chat.ts', "export * from '../server'", 'no-restricted-imports'],
  ['main/server/http.ts', "export * from '../store'", 'no-restricted-imports'],
  ['main/services/chat.ts', "export { default } from 'better-sqlite3'", 'no-restricted-imports'],
  // Store imports nothing else from main/.
  ['main/store/db.ts', "export * from '../engine'", 'no-restricted-imports'],
  ['main/store/db.ts', "export * from '../services/chat'", 'no-restricted-imports'],
  ['main/store/db.ts', "export * from 'onnxruntime-node'", 'no-restricted-imports'],
  // Renderer: no electron, no Node, nothing from main/, only Api types from preload.
  ['renderer/src/App.tsx', "import { readFileSync } from 'node:fs'", 'no-restricted-imports'],
  ['renderer/src/App.tsx', "import { readFileSync } from 'fs'", 'no-restricted-imports'],
  ['renderer/src/App.tsx', "import { ipcRenderer } from 'electron'", 'no-restricted-imports'],
  ['renderer/src/App.tsx', "export * from '../../main/engine'", 'no-restricted-imports'],
  ['renderer/src/App.tsx', "export * from '../../preload/index'", 'no-restricted-imports'],
  ['renderer/src/App.tsx', "export * from '../../preload'", 'no-restricted-imports'],
  ['renderer/src/App.tsx', "import { api } from '../../preload/api'\nexport const a = api", 'no-restricted-imports'],
  ['main/cli/main.ts', "export * from '../server'", 'no-restricted-imports'],
  // Preload: api.ts has zero imports; the sandboxed preload uses no Node built-ins.
  ['preload/api.ts', "import type { X } from './other'\nexport type Y = X", 'no-restricted-imports'],
  ['preload/api.ts', "export type Y = import('./other').X", 'no-restricted-syntax'],
  ['preload/index.ts', "export { readFileSync } from 'node:fs'", 'no-restricted-imports'],
  ['preload/index.ts', "export * from '../main/engine'", 'no-restricted-imports'],
  // Files in folders that no block claims.
  ['main/ipc/handlers.ts', 'export const x = 1', 'tandem/layer-covered'],
  ['main/helpers.ts', 'export const x = 1', 'tandem/layer-covered'],
  ['main/engine/util.ts', 'export const x = 1', 'tandem/layer-covered'],
  ['main/engine/cache/kv.ts', 'export const x = 1', 'tandem/layer-covered'],
  // No `any`, anywhere.
  ['test/engine/x.test.ts', 'export const x: any = 1', '@typescript-eslint/no-explicit-any'],
  ['main/engine/model/x.ts', 'export function f(a: any): void { void a }', '@typescript-eslint/no-explicit-any']
]

describe('import layering lint', () => {
  it.each(ALLOWED)('allows %s: %s', async (path, code) => {
    expect(await layeringErrors(path, code)).toEqual([])
  })

  it.each(REFUSED)('refuses %s: %s', async (path, code, rule) => {
    expect(await ruleIds(path, code)).toContain(rule)
  })

  it('claims every folder the layering names, and nothing outside main/, preload/, renderer/', async () => {
    for (const path of ['main/engine/model/a.ts', 'main/store/a.ts', 'renderer/src/deep/a.tsx', 'preload/a.ts']) {
      expect(await layeringErrors(path, 'export const x = 1')).toEqual([])
    }
    expect(await layeringErrors('test/anything/a.ts', "export * from '../../main/engine/model/gguf'")).toEqual([])
  })
})
