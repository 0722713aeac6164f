/**
 * @file Settings → Devices → Provider libraries: the plugin execution-provider libraries that bring NPUs
 * (AMD VitisAI, Intel OpenVINO, Qualcomm QNN), each with whether it loaded and the options its sessions get;
 * "Add a provider library" loads the file at once (a file that does not load is refused with ONNX Runtime's
 * reason) and keeps it, with its options, for later starts.
 */
import { useCallback, useEffect, useState, type JSX } from 'react'
import type { ProviderLibraryView } from '../../../preload/api'
import { describeError, errorText } from '../lib/errors'
import { LIMITS } from '../lib/limits'
import { formatProviderOptions, parseProviderOptions } from '../lib/provider-options'
import { useApi } from '../state/api-context'
import { FormError } from './FormError'
import { Icon } from './icons'
import { InlineTextInput } from './InlineTextInput'

/** The section; `onChanged` re-reads the device list after a library was added. */
export function ProviderLibraries({ onChanged }: { onChanged: () => void }): JSX.Element {
  const api = useApi()
  const [libraries, setLibraries] = useState<readonly ProviderLibraryView[] | null>(null)
  const [name, setName] = useState('')
  const [path, setPath] = useState('')
  const [optionsText, setOptionsText] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const load = useCallback(() => {
    api.devices.providerLibraries().then(setLibraries, (e: unknown) => setError(errorText(describeError(e))))
  }, [api])
  useEffect(load, [load])

  const add = (): void => {
    if (name.trim() === '' || path.trim() === '') {
      setError('Give the library a name and the full path of its file.')
      return
    }
    const parsed = parseProviderOptions(optionsText)
    if ('error' in parsed) {
      setError(parsed.error)
      return
    }
    setBusy(true)
    setNotice(null)
    api.devices.addProviderLibrary(name.trim(), path.trim(), parsed.options).then(
      (list) => {
        setBusy(false)
        setLibraries(list)
        setName('')
        setPath('')
        setOptionsText('')
        setError(null)
        onChanged()
      },
      (e: unknown) => {
        setBusy(false)
        setError(errorText(describeError(e)))
      }
    )
  }

  const remove = (lib: ProviderLibraryView): void => {
    api.devices.removeProviderLibrary(lib.name).then(
      (list) => {
        setLibraries(list)
        setError(null)
        setNotice(`Removed ${lib.name}. Its devices stay listed until Tandem restarts.`)
      },
      (e: unknown) => setError(errorText(describeError(e)))
    )
  }

  return (
    <section className="settings-section" aria-labelledby="settings-providers">
      <h3 id="settings-providers">Provider libraries</h3>
      <p className="field-help">
        NPUs are reached through their vendor&apos;s ONNX Runtime provider library: VitisAI for AMD Ryzen AI, OpenVINO for Intel Core Ultra,
        QNN for Snapdragon. Tandem loads the file to check it, then again each time it starts. Options go to every session on its devices,
        as name=value pairs separated by commas (OpenVINO: device_type=NPU; VitisAI: config_file=…, cache_dir=…).
      </p>
      <ul className="folder-list" aria-label="Provider libraries">
        {(libraries ?? []).map((lib) => (
          <li key={lib.name} className={lib.status === 'registered' ? 'folder' : 'folder missing'} data-provider={lib.name}>
            <Icon name={lib.status === 'registered' ? 'check' : 'alert'} size={16} />
            <span className="folder-path" title={lib.path}>
              {lib.name}: {lib.path}
              {Object.keys(lib.options).length > 0 && <span className="provider-options"> ({formatProviderOptions(lib.options)})</span>}
            </span>
            {lib.status === 'registered' ? (
              <span className="badge ok">{lib.eps.length > 0 ? lib.eps.join(', ') : 'Loaded'}</span>
            ) : (
              <span className="badge warn folder-problem">Failed: {lib.reason ?? 'did not load'}</span>
            )}
            <button type="button" className="button-ghost button-small" aria-label={`Remove provider library ${lib.name}`} onClick={() => remove(lib)}>
              Remove
            </button>
          </li>
        ))}
        {libraries !== null && libraries.length === 0 && <li className="field-help">No provider libraries added.</li>}
      </ul>
      <form
        className="inline-form"
        aria-label="Add a provider library"
        onSubmit={(e) => {
          e.preventDefault()
          add()
        }}
      >
        <InlineTextInput id="settings-provider-name" label="Library name" value={name} maxLength={LIMITS.maxProviderNameChars} placeholder="openvino" onChange={setName} />
        <InlineTextInput
          id="settings-provider-path"
          label="Library file path"
          value={path}
          maxLength={LIMITS.maxPathChars}
          placeholder="/path/to/the/provider/library"
          onChange={setPath}
        />
        <InlineTextInput
          id="settings-provider-options"
          label="Provider options"
          value={optionsText}
          maxLength={LIMITS.maxPathChars}
          placeholder="options, e.g. device_type=NPU"
          onChange={setOptionsText}
        />
        <button type="submit" className="button-secondary" disabled={busy}>
          {busy ? 'Loading…' : 'Add a provider library'}
        </button>
      </form>
      <FormError message={error} />
      {notice !== null && <p className="field-help">{notice}</p>}
    </section>
  )
}
