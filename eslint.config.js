/**
 * @file Lint: typescript-eslint's non-type-aware recommended rules, no `any`, and the import layering of
 * /work/shared/notes/style.md §2–3 as one `no-restricted-imports` block per folder.
 *
 * How the layering blocks work: flat-config blocks that set the same rule replace each other (the last
 * matching block wins), so every block lists its folder's complete ban list and more specific blocks
 * (devices/ort.ts, preload/index.ts, preload/api.ts) come after the folder they refine. Relative
 * specifiers are matched by regex without resolving them, so a `../`-run followed by a layer name means
 * that layer ("../model", "../../model/gguf"); no folder inside a layer may reuse a layer name.
 * main/common (the boundary reader) imports nothing and every folder of main/ may import it.
 * A file under main/, preload/ or renderer/ that no block claims fails with `tandem/layer-covered`:
 * a new folder needs its own block before it can hold code. Do not relax these rules to make code pass.
 */
import { builtinModules } from 'node:module'
import { relative } from 'node:path'
import { defineConfig, globalIgnores } from 'eslint/config'
import tseslint from 'typescript-eslint'

/** Engine layers, bottom to top: a layer may import the layers before it, through their index.ts. */
const ENGINE_LAYERS = ['model', 'graph', 'devices', 'plan', 'runtime']

/**
 * Folders of main/engine/runtime and the sibling folders each may not import: generation and session stand
 * alone, hetero builds on session, profile on hetero, model-worker on session and hetero.
 */
const RUNTIME_FOLDERS = {
  generation: ['session', 'hetero', 'profile', 'model-worker', 'header-reader'],
  session: ['generation', 'hetero', 'profile', 'model-worker', 'header-reader'],
  hetero: ['generation', 'profile', 'model-worker', 'header-reader'],
  profile: ['generation', 'model-worker', 'header-reader'],
  'model-worker': ['generation', 'profile', 'header-reader'],
  'header-reader': ['generation', 'session', 'hetero', 'profile', 'model-worker']
}

/** Top-level folders of main/ outside the engine. */
const MAIN_FOLDERS = ['store', 'services', 'server', 'cli']

const TS_FILES = ['**/*.ts', '**/*.tsx', '**/*.mts', '**/*.cts']

/** One or more `../` steps at the start of a specifier. */
const UP = '^(\\.\\./)+'

/** A `no-restricted-imports` pattern; regexes are anchored by the callers and matched case-sensitively. */
function ban(regex, message, extra = {}) {
  return { regex, message, caseSensitive: true, ...extra }
}

const escapeRegex = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

const BAN_ELECTRON = ban('^electron(/.*)?$', 'Only main/index.ts and preload/index.ts may import electron.')
const BAN_ORT = ban(
  '^onnxruntime-(node|common|web)(/.*)?$',
  'Only main/engine/devices/ort.ts may import onnxruntime; use the devices layer.'
)
const BAN_KOFFI = ban('^koffi$', 'Only main/engine/devices/ort-c/library.ts may use FFI (koffi); use the devices layer.')
const BAN_SQLITE = ban('^better-sqlite3$', 'SQL lives only in main/store/.')
const BAN_NODE_BUILTINS = ban(
  `^(node:.*|(${builtinModules.map(escapeRegex).join('|')})(/.*)?)$`,
  'No Node built-ins here (sandboxed renderer/preload code).'
)
/** `..`, `../..`, `../index`: a parent folder's barrel, which is how import cycles start. */
const BAN_PARENT_BARREL = ban('^(\\.\\.(/\\.\\.)*/?|(\\.\\./)+index)$', 'Do not import a parent folder or its index.ts.')
/** From main/*: engine internals; only main/engine/index.ts is public. */
const BAN_ENGINE_DEEP = ban(
  '^(\\.\\.?/)+engine/(?!index$).+',
  "Outside the engine, import only main/engine/index.ts ('../engine')."
)
const BAN_RENDERER = ban(`${UP}renderer(/|$)`, 'Nothing outside renderer/ imports renderer code.')
/** From main/*: the preload bridge itself; only its `Api` types are shared. */
const BAN_PRELOAD_IMPL = ban(`${UP}preload(/(?!api$).*)?$`, 'From preload/, import only the Api types in preload/api.ts.')

/** The complete ban list for main/engine/<layer>/**. */
function enginePatterns(layer) {
  const index = ENGINE_LAYERS.indexOf(layer)
  const below = ENGINE_LAYERS.slice(0, index)
  const above = ENGINE_LAYERS.slice(index + 1)
  const allowed = below.length > 0 ? below.join(', ') : 'no other engine folder'
  const patterns = [
    BAN_ELECTRON,
    BAN_ORT,
    BAN_KOFFI,
    BAN_SQLITE,
    BAN_PARENT_BARREL,
    ban(
      `${UP}(${[...MAIN_FOLDERS, 'engine', 'main', 'preload', 'renderer'].join('|')})(/|$)`,
      'main/engine/ imports nothing from outside the engine (but main/common).'
    )
  ]
  if (above.length > 0) {
    patterns.push(
      ban(
        `${UP}(${above.join('|')})(/|$)`,
        `main/engine/${layer} may import only ${allowed} (layers: runtime -> plan -> devices -> graph -> model).`
      )
    )
  }
  if (below.length > 0) {
    patterns.push(
      ban(
        `${UP}(${below.join('|')})/(?!index$).+`,
        "Import another engine folder through its index.ts ('../model'), not its files."
      )
    )
  }
  return patterns
}

/** Flat-config rule value for a ban list. */
const restrict = (patterns) => ['error', { patterns }]

/** Reports every file it is enabled for; layer blocks switch it off for the files they claim. */
const layerCovered = {
  meta: {
    type: 'problem',
    docs: { description: 'Every file under main/, preload/ and renderer/ must be claimed by a layering block.' },
    schema: [],
    messages: {
      uncovered:
        '{{file}} is in a folder no layering block in eslint.config.js covers; add a block for it (style.md §3).'
    }
  },
  create(context) {
    return {
      Program(node) {
        const file = relative(context.cwd, context.filename).split('\\').join('/')
        context.report({ node, messageId: 'uncovered', data: { file } })
      }
    }
  }
}

/** A layering block: claims `files` and sets their complete import ban list. */
function layer(name, files, patterns, extraRules = {}) {
  return {
    name: `tandem/layering/${name}`,
    files,
    rules: {
      'tandem/layer-covered': 'off',
      'no-restricted-imports': restrict(patterns),
      ...extraRules
    }
  }
}

export default defineConfig(
  globalIgnores(['out/', 'dist/', '**/node_modules/', 'test-results/', 'playwright-report/', '.cache/', 'bench/results/', 'bench/.scratch/', 'bench/.models/']),
  tseslint.configs.recommended,
  {
    name: 'tandem/base',
    files: TS_FILES,
    plugins: { tandem: { meta: { name: 'tandem-local' }, rules: { 'layer-covered': layerCovered } } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error'
    }
  },
  // House rule 12: data from outside is read into typed values, never asserted. `as const` stays allowed.
  {
    name: 'tandem/no-type-assertions',
    files: ['main/**/*.{ts,tsx}', 'preload/**/*.{ts,tsx}', 'renderer/**/*.{ts,tsx}'],
    rules: { '@typescript-eslint/consistent-type-assertions': ['error', { assertionStyle: 'never' }] }
  },
  {
    name: 'tandem/layering/must-be-covered',
    files: ['main/**/*.{ts,tsx}', 'preload/**/*.{ts,tsx}', 'renderer/**/*.{ts,tsx}'],
    rules: { 'tandem/layer-covered': 'error' }
  },

  // --- main/engine: runtime -> plan -> devices -> graph -> model ---
  ...ENGINE_LAYERS.map((name) => layer(`engine-${name}`, [`main/engine/${name}/**/*.ts`], enginePatterns(name))),
  // inside runtime: what runs together lives together, and the folders stack (runtime/index.ts has the map)
  ...Object.entries(RUNTIME_FOLDERS).map(([folder, banned]) =>
    layer(`engine-runtime-${folder}`, [`main/engine/runtime/${folder}/**/*.ts`], [
      ...enginePatterns('runtime'),
      ban(`${UP}(${banned.join('|')})(/|$)`, `main/engine/runtime/${folder} may not import runtime/${banned.join(', runtime/')} (see the map in runtime/index.ts).`),
      ban(`${UP}text-model$`, 'Only the runtime root builds on text-model.ts; nothing below it imports it.')
    ])
  ),
  layer(
    'engine-devices-ort',
    ['main/engine/devices/ort.ts'],
    enginePatterns('devices').filter((p) => p !== BAN_ORT)
  ),
  layer(
    'engine-devices-ort-c',
    ['main/engine/devices/ort-c/library.ts'],
    enginePatterns('devices').filter((p) => p !== BAN_KOFFI)
  ),
  // The engine's public face re-exports the folders' own index.ts files only, and reaches nothing outside.
  layer('engine-index', ['main/engine/index.ts'], [
    BAN_ELECTRON,
    BAN_ORT,
    BAN_KOFFI,
    BAN_SQLITE,
    ban('^\\.\\.(/|$)', 'main/engine/ imports nothing from outside the engine.'),
    ban('^\\./[^/]+/(?!index$).+', "main/engine/index.ts re-exports a folder through its index.ts ('./runtime'), not its files.")
  ]),

  // --- main/common: the boundary reader every layer of main/ builds on; it imports nothing ---
  layer('main-common', ['main/common/**/*.ts'], [
    BAN_ELECTRON,
    BAN_ORT,
    BAN_KOFFI,
    BAN_SQLITE,
    BAN_NODE_BUILTINS,
    ban('^\\.\\.(/|$)', 'main/common/ imports nothing from outside itself: every layer of main/ builds on it.')
  ]),

  // --- main/ outside the engine ---
  layer('main-index', ['main/index.ts'], [
    BAN_ORT,
    BAN_KOFFI,
    BAN_SQLITE,
    BAN_ENGINE_DEEP,
    BAN_RENDERER,
    BAN_PRELOAD_IMPL,
    ban('^\\./cli(/|$)', 'The Electron entry does not import the CLI.')
  ]),
  layer('main-services', ['main/services/**/*.ts'], [
    BAN_ELECTRON,
    BAN_ORT,
    BAN_KOFFI,
    BAN_SQLITE,
    BAN_ENGINE_DEEP,
    BAN_RENDERER,
    BAN_PRELOAD_IMPL,
    BAN_PARENT_BARREL,
    ban(`${UP}(server|cli)(/|$)`, 'main/services/ is below server and cli; it may not import them.')
  ]),
  layer('main-server', ['main/server/**/*.ts'], [
    BAN_ELECTRON,
    BAN_ORT,
    BAN_KOFFI,
    BAN_SQLITE,
    BAN_ENGINE_DEEP,
    BAN_RENDERER,
    BAN_PRELOAD_IMPL,
    BAN_PARENT_BARREL,
    ban(`${UP}(store|cli)(/|$)`, 'main/server/ reaches data through main/services/, not store or cli.')
  ]),
  layer('main-cli', ['main/cli/**/*.ts'], [
    BAN_ELECTRON,
    BAN_ORT,
    BAN_KOFFI,
    BAN_SQLITE,
    BAN_ENGINE_DEEP,
    BAN_RENDERER,
    BAN_PRELOAD_IMPL,
    BAN_PARENT_BARREL,
    ban(`${UP}server(/|$)`, 'main/cli/ does not import the HTTP server (only serve.ts, the browser-mode entry, does).')
  ]),
  // `tandem serve` is an entry point like main/index.ts: it wires services to the HTTP host.
  layer('main-cli-serve', ['main/cli/serve.ts'], [
    BAN_ELECTRON,
    BAN_ORT,
    BAN_KOFFI,
    BAN_SQLITE,
    BAN_ENGINE_DEEP,
    BAN_RENDERER,
    BAN_PRELOAD_IMPL,
    BAN_PARENT_BARREL
  ]),
  layer('main-store', ['main/store/**/*.ts'], [
    BAN_ELECTRON,
    BAN_ORT,
    BAN_KOFFI,
    BAN_PARENT_BARREL,
    ban(
      `${UP}(engine|services|server|cli|main|preload|renderer)(/|$)`,
      'main/store/ imports nothing from main/ except itself.'
    )
  ]),

  // --- preload: sandboxed, bundled to CommonJS ---
  layer('preload', ['preload/**/*.ts'], [
    BAN_ELECTRON,
    BAN_ORT,
    BAN_KOFFI,
    BAN_SQLITE,
    BAN_NODE_BUILTINS,
    ban('^\\.\\.(/|$)', 'preload/ imports nothing from outside preload/.')
  ]),
  layer('preload-index', ['preload/index.ts'], [
    BAN_ORT,
    BAN_KOFFI,
    BAN_SQLITE,
    BAN_NODE_BUILTINS,
    ban('^\\.\\.(/|$)', 'preload/ imports nothing from outside preload/.')
  ]),
  layer(
    'preload-api',
    ['preload/api.ts'],
    [ban('.*', 'preload/api.ts has zero imports: it is the types-only Api contract.')],
    {
      'no-restricted-syntax': [
        'error',
        { selector: 'ImportExpression', message: 'preload/api.ts has zero imports.' },
        { selector: 'TSImportType', message: 'preload/api.ts has zero imports.' },
        { selector: 'TSExternalModuleReference', message: 'preload/api.ts has zero imports.' }
      ]
    }
  ),

  // --- renderer: React, sees only the Api types ---
  layer('renderer', ['renderer/**/*.{ts,tsx}'], [
    BAN_ELECTRON,
    BAN_ORT,
    BAN_KOFFI,
    BAN_SQLITE,
    BAN_NODE_BUILTINS,
    ban(`${UP}main(/|$)`, 'renderer/ imports nothing from main/; it talks to window.tandem.'),
    ban(`${UP}preload(/(?!api$).*)?$`, 'renderer/ may import only the Api types from preload/api.ts.'),
    // Besides types, the plain data both sides agree on and one pure parser of the same kind (preload/api.ts has no imports).
    ban(`${UP}preload/api$`, 'renderer/ may import only types, API_METHODS, API_LIMITS, DOCUMENT_EXTENSIONS and parseRemoteModelId from preload/api.ts (plain data, a pure parser).', {
      allowTypeImports: true,
      allowImportNames: ['API_METHODS', 'API_LIMITS', 'DOCUMENT_EXTENSIONS', 'parseRemoteModelId']
    })
  ])
)
