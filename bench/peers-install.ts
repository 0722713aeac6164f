/**
 * @file Installs the benchmark peers on demand: `npm ci --prefix bench/peers` from its own lockfile when
 * bench/peers/node_modules is missing. They stay out of the app's install (node-llama-cpp alone brings
 * ~680 MB of prebuilt backends).
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { record, stringField } from './guards'

/** Packages the benchmark loads from bench/peers. */
const PEER_PACKAGES = ['node-llama-cpp', '@huggingface/transformers']

function installed(peersDir: string): boolean {
  return PEER_PACKAGES.every((p) => existsSync(join(peersDir, 'node_modules', p, 'package.json')))
}

/** Runs `npm ci` in `peersDir` when a peer package is missing. */
export async function ensurePeers(peersDir: string, log: (line: string) => void): Promise<void> {
  if (installed(peersDir)) return
  log(`installing benchmark peers: npm ci --prefix ${peersDir} (about 1.2 GB, once)`)
  const t0 = performance.now()
  const code = await new Promise<number | null>((resolve, reject) => {
    // onnxruntime-node (a transformers.js dependency) must not run its downloading install script;
    // package.json's allowScripts denies it, the env var is the backstop for npm without allowScripts
    const child = spawn('npm', ['ci', '--prefix', peersDir, '--no-audit', '--no-fund'], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' }
    })
    child.once('error', reject)
    child.once('exit', resolve)
  })
  if (code !== 0 || !installed(peersDir)) throw new Error(`npm ci --prefix ${peersDir} failed (exit code ${code})`)
  log(`installed benchmark peers in ${((performance.now() - t0) / 1000).toFixed(0)} s`)
}

/** Version of a package installed under bench/peers, or null. */
export async function peerPackageVersion(peersDir: string, name: string): Promise<string | null> {
  const path = join(peersDir, 'node_modules', ...name.split('/'), 'package.json')
  if (!existsSync(path)) return null
  return stringField(record(JSON.parse(await readFile(path, 'utf8')), `${name} package.json`), 'version', `${name} package.json`)
}
