/**
 * @file Settings → General → Conversation memory: the KV snapshots that let a long conversation continue at once
 * (after a restart, an edit, on a branch) — the space they use, their budget, and "Clear KV snapshots".
 */
import { useCallback, useEffect, useState, type JSX } from 'react'
import type { KvSnapshotUsage } from '../../../preload/api'
import { describeError, errorText } from '../lib/errors'
import { formatBytes } from '../lib/format'
import { useApi } from '../state/api-context'
import type { SettingsState } from '../state/use-settings'
import { FormStatus, type FormStatusValue } from './FormError'

const GIB = 1024 ** 3

/** The section. */
export function KvSnapshotSettings({ state }: { state: SettingsState }): JSX.Element | null {
  const api = useApi()
  const [usage, setUsage] = useState<KvSnapshotUsage | null>(null)
  const [budget, setBudget] = useState<string | null>(null)
  const [status, setStatus] = useState<FormStatusValue | null>(null)
  const load = useCallback(() => {
    api.settings.kvSnapshots().then(setUsage, (e: unknown) => setStatus({ ok: false, text: errorText(describeError(e)) }))
  }, [api])
  useEffect(load, [load])
  const saved = state.settings?.kvSnapshotBudgetBytes
  if (saved === undefined) return null
  const shown = budget ?? String(Math.round((saved / GIB) * 100) / 100)
  return (
    <section className="settings-section" aria-labelledby="settings-kv">
      <h3 id="settings-kv">Conversation memory</h3>
      <p className="field-help">
        After each reply Tandem keeps what the model computed for the conversation, so continuing it — also after a restart, after an edit or on a branch — answers at
        once instead of reading the whole history again. The oldest go first when the budget is full.
      </p>
      <p className="field-help" role="status" aria-label="Space used by conversation memory">
        {usage === null ? 'Measuring…' : `${formatBytes(usage.bytes)} used in ${usage.blocks} blocks`}
      </p>
      <form
        className="inline-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          const gib = Number(shown)
          if (shown.trim() === '' || !Number.isFinite(gib) || gib < 0 || gib > 1024) {
            setStatus({ ok: false, text: 'The budget is a number of GB from 0 (keep none) to 1024.' })
            return
          }
          void state.update({ kvSnapshotBudgetBytes: Math.round(gib * GIB) }).then((failure) => {
            if (failure === null) setBudget(null)
            setStatus(failure === null ? { ok: true, text: 'Saved. It applies from the next reply.' } : { ok: false, text: errorText(failure) })
          })
        }}
      >
        <label htmlFor="kv-budget">Budget (GB)</label>
        <input id="kv-budget" type="number" min={0} max={1024} step="any" value={shown} onChange={(e) => setBudget(e.target.value)} />
        <button type="submit" className="button-secondary">
          Save
        </button>
        <button
          type="button"
          className="button-secondary"
          onClick={() => {
            api.settings.clearKvSnapshots().then(
              (u) => {
                setUsage(u)
                setStatus({ ok: true, text: 'Cleared.' })
              },
              (e: unknown) => setStatus({ ok: false, text: errorText(describeError(e)) })
            )
          }}
        >
          Clear KV snapshots
        </button>
      </form>
      <FormStatus status={status} />
    </section>
  )
}
