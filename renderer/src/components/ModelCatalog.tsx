/**
 * @file Settings → Models → Download a model: the curated catalog, each model with its parameters, quantization,
 * download size, the memory it needs (flagged when this computer has less) and license; Download shows a progress
 * bar with the percent, speed and time left, Pause and Resume, and Cancel (after a confirmation: the bytes it got are
 * deleted); a failure is shown in place with Retry.
 */
import { useEffect, useState, type JSX } from 'react'
import type { CatalogModelView, ModelEntry } from '../../../preload/api'
import { downloadPercent, formatBytes, formatDownloadProgress, formatParameters } from '../lib/format'
import { useCatalog, type LiveDownload } from '../state/use-catalog'
import { ConfirmInline } from './ConfirmInline'
import { Icon } from './icons'

/** Bytes per second over what this view has seen of a download, once a second of it has passed. */
function speed(live: LiveDownload | undefined): number | null {
  if (live === undefined || live.nowMs - live.firstMs < 1000) return null
  return ((live.receivedBytes - live.firstBytes) * 1000) / (live.nowMs - live.firstMs)
}

interface EntryProps {
  readonly model: CatalogModelView
  readonly totalMemoryBytes: number
  readonly live: LiveDownload | undefined
  readonly failure: string | undefined
  readonly onDownload: () => void
  readonly onPause: () => void
  readonly onCancel: () => void
}

function CatalogEntry({ model: m, totalMemoryBytes, live, failure, onDownload, onPause, onCancel }: EntryProps): JSX.Element {
  const [confirming, setConfirming] = useState(false)
  const state = m.state
  const error = failure ?? m.error
  const progress = live ?? (state.kind === 'downloading' || state.kind === 'paused' ? state : null)
  const cancellable = state.kind === 'downloading' || state.kind === 'paused'
  // a download that ended while the question was open (installed, or cancelled in another window) takes it away
  useEffect(() => {
    if (!cancellable) setConfirming(false)
  }, [cancellable])
  const facts = [`${formatParameters(m.parameters)} parameters`, m.quantization ?? 'unquantized', `${formatBytes(m.sizeBytes)} download`, `needs ${formatBytes(m.memoryBytes)} of memory`, m.license]
  return (
    <li className="catalog-entry" data-catalog-id={m.id} data-state={state.kind}>
      <div className="model-row-head">
        <span className="model-name">{m.name}</span>
        {state.kind === 'installed' && (
          <span className="badge ok">
            <Icon name="check" size={12} /> Installed
          </span>
        )}
        <span className="spacer" />
        {state.kind === 'available' && error === null && (
          <button type="button" className="button-secondary button-small" aria-label={`Download ${m.name}`} onClick={onDownload}>
            <Icon name="download" size={14} /> Download
          </button>
        )}
        {state.kind === 'downloading' && (
          <button type="button" className="button-secondary button-small" aria-label={`Pause ${m.name}`} onClick={onPause}>
            Pause
          </button>
        )}
        {state.kind === 'paused' && error === null && (
          <button type="button" className="button-secondary button-small" aria-label={`Resume ${m.name}`} onClick={onDownload}>
            Resume
          </button>
        )}
        {cancellable && !confirming && (
          <button type="button" className="button-ghost button-small" aria-label={`Cancel the download of ${m.name}…`} onClick={() => setConfirming(true)}>
            Cancel…
          </button>
        )}
      </div>
      <span className="model-facts">{facts.join(' · ')}</span>
      {m.memoryBytes > totalMemoryBytes && (
        <span className="badge warn catalog-memory">Needs more memory than this computer has ({formatBytes(totalMemoryBytes)})</span>
      )}
      {progress !== null && state.kind !== 'installed' && (
        <div className="catalog-progress">
          <progress aria-label={`Downloading ${m.name}`} value={downloadPercent(progress.receivedBytes, progress.totalBytes)} max={100} />
          <span className="catalog-progress-text">
            {state.kind === 'paused' ? 'Paused: ' : ''}
            {formatDownloadProgress(progress.receivedBytes, progress.totalBytes, state.kind === 'downloading' ? speed(live) : null)}
          </span>
        </div>
      )}
      {cancellable && confirming && (
        <ConfirmInline
          label={`Cancel the download of ${m.name}`}
          confirmLabel="Discard download"
          cancelLabel="Keep it"
          onConfirm={() => {
            setConfirming(false)
            onCancel()
          }}
          onCancel={() => setConfirming(false)}
        >
          {state.kind === 'downloading' ? 'Stop downloading' : 'Discard the paused download of'} {m.name} and delete the {formatBytes(progress?.receivedBytes ?? 0)} it got? Downloading it again
          starts from the beginning.
        </ConfirmInline>
      )}
      {error !== null && state.kind !== 'downloading' && state.kind !== 'installed' && (
        <div className="catalog-error" role="alert">
          <p className="form-error">{error}</p>
          <button type="button" className="button-secondary button-small" aria-label={`Retry ${m.name}`} onClick={onDownload}>
            Retry
          </button>
        </div>
      )}
    </li>
  )
}

interface ModelCatalogProps {
  /** the models listed now: the catalog is read again when they change (one deleted is no longer installed) */
  readonly models: readonly ModelEntry[]
  /** a model was downloaded: the model list should show it */
  readonly onInstalled: (entry: ModelEntry) => void
}

/** The section. */
export function ModelCatalog({ models: listed, onInstalled }: ModelCatalogProps): JSX.Element {
  const catalog = useCatalog(listed.map((m) => m.id).join('\n'), onInstalled)
  const models = catalog.catalog?.models ?? []
  return (
    <section className="settings-section" aria-labelledby="settings-catalog">
      <h3 id="settings-catalog">Download a model</h3>
      <p className="field-help">
        Instruction models that suit laptops with an NPU, from the Hugging Face hub, into Tandem&apos;s own models folder. Each file is checked against the hub&apos;s checksum before
        it is listed; a paused download keeps what it got.
      </p>
      {catalog.error !== null && (
        <p className="form-error" role="alert">
          The catalog could not be read: {catalog.error.detail}
        </p>
      )}
      {catalog.catalog === null && catalog.error === null && <p className="field-help">Loading the catalog…</p>}
      {models.length > 0 && (
        <ul className="model-list" aria-label="Model catalog">
          {models.map((m) => (
            <CatalogEntry
              key={m.id}
              model={m}
              totalMemoryBytes={catalog.catalog?.totalMemoryBytes ?? Infinity}
              live={catalog.live[m.id]}
              failure={catalog.failures[m.id]}
              onDownload={() => catalog.download(m.id)}
              onPause={() => catalog.pause(m.id)}
              onCancel={() => catalog.cancel(m.id)}
            />
          ))}
        </ul>
      )}
    </section>
  )
}
