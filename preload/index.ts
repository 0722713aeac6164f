/**
 * @file Sandboxed preload: exposes exactly one global, `window.tandem`, implementing `Api`.
 * Never exposes `ipcRenderer` or a generic invoke: each method maps to one named channel, and each reply is
 * validated here because it crosses a process boundary.
 */
import { contextBridge, ipcRenderer } from 'electron'
import type { Api } from './api'

/** Invoke a `service:method` channel and insist on a string reply. */
async function invokeString(channel: string): Promise<string> {
  const reply: unknown = await ipcRenderer.invoke(channel)
  if (typeof reply !== 'string') throw new Error(`${channel}: expected a string reply, got ${typeof reply}`)
  return reply
}

const api: Api = {
  version: () => invokeString('app:version')
}

contextBridge.exposeInMainWorld('tandem', api)
