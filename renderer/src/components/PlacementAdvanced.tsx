/**
 * @file The advanced part of the placement editor, behind a disclosure: the device of each op group per
 * phase (every layer; the final groups after the last layer), entries for single layers (listed, removable),
 * the prefill chunk length, and the matmul splits of each phase.
 */
import { useId, useState, type JSX } from 'react'
import type { DeviceView, PlacementJson, PlacementView } from '../../../preload/api'
import { deviceName } from '../lib/devices'
import { FINAL_OP_GROUPS, groupDevice, PHASE_NAMES, removeGroupEntry, setGroupDevice, singleLayerEntries } from '../lib/placement-edit'
import { DeviceSelect } from './DeviceSelect'
import { PartitionEditor } from './PartitionEditor'

interface PlacementAdvancedProps {
  /** what the fields show: the draft, or the placement that runs next */
  readonly placement: PlacementJson
  readonly devices: readonly DeviceView[]
  readonly opGroups: readonly string[]
  readonly matmulGroups: readonly string[]
  /** the prefill chunks the engine takes for this model (and an NPU's range) */
  readonly chunk: PlacementView['prefillChunk']
  readonly disabled: boolean
  /** an edit: the caller turns it into an unsaved custom placement */
  readonly onChange: (placement: PlacementJson) => void
}

const PHASE_LABEL = { prefill: 'Prefill', decode: 'Decode' } as const

/** The disclosure and, when open, the editor. */
export function PlacementAdvanced(props: PlacementAdvancedProps): JSX.Element {
  const [open, setOpen] = useState(false)
  const { placement, devices, opGroups } = props
  const panelId = useId()
  const singles = PHASE_NAMES.flatMap((phase) => singleLayerEntries(placement.phases[phase]).map((s) => ({ phase, ...s })))
  return (
    <div className="advanced">
      <button type="button" className="disclosure" aria-expanded={open} aria-controls={panelId} onClick={() => setOpen((v) => !v)}>
        <span className="disclosure-mark" aria-hidden="true">
          {open ? '▾' : '▸'}
        </span>
        Advanced: op groups and splits
      </button>
      {open && (
        <div id={panelId} className="advanced-body">
          <p className="field-help">
            Put single op groups on another device, or split a matrix multiplication between two devices. Changing anything here makes the placement
            Custom.
          </p>
          {opGroups.length === 0 ? (
            <p className="empty-note">Op groups are listed once a usable model is chosen.</p>
          ) : (
            <div className="table-scroll">
              <table className="group-table">
                <caption className="visually-hidden">Device of each op group, per stage</caption>
                <thead>
                  <tr>
                    <th scope="col">Op group</th>
                    {PHASE_NAMES.map((phase) => (
                      <th key={phase} scope="col">
                        {PHASE_LABEL[phase]}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {opGroups.map((group) => (
                    <tr key={group}>
                      <th scope="row">
                        <span className="mono">{group}</span>
                        {FINAL_OP_GROUPS.includes(group) && <span className="field-help"> after the last layer</span>}
                      </th>
                      {PHASE_NAMES.map((phase) => (
                        <td key={phase}>
                          <DeviceSelect
                            id={`${panelId}-${phase}-${group}`}
                            label={`${group} in ${phase}`}
                            devices={devices}
                            value={groupDevice(placement.phases[phase], group) ?? ''}
                            inherit={`Stage default (${deviceName(placement.phases[phase].device, devices)})`}
                            disabled={props.disabled}
                            onChange={(v) => props.onChange(setGroupDevice(placement, phase, group, v === '' ? null : v))}
                          />
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {singles.length > 0 && (
            <div className="singles">
              <h5 className="split-title">Single-layer entries</h5>
              <ul className="singles-list">
                {singles.map(({ phase, index, entry }) => (
                  <li key={`${phase}-${index}`}>
                    <span>
                      {PHASE_LABEL[phase]}: <span className="mono">{entry.group}</span> in layer {String(entry.layer)} on {deviceName(entry.device, devices)}
                    </span>
                    <button
                      type="button"
                      className="button-ghost button-small"
                      aria-label={`Remove ${phase} ${entry.group} layer ${String(entry.layer)} entry`}
                      disabled={props.disabled}
                      onClick={() => props.onChange(removeGroupEntry(placement, phase, index))}
                    >
                      Remove
                    </button>
                  </li>
                ))}
              </ul>
            </div>
          )}
          <div className="field chunk-field">
            <label htmlFor={`${panelId}-chunk`}>Prefill chunk (tokens)</label>
            <input
              id={`${panelId}-chunk`}
              type="number"
              inputMode="numeric"
              min={1}
              max={props.chunk.maxTokens}
              step={1}
              value={Number.isFinite(placement.prefillChunkTokens) ? placement.prefillChunkTokens : ''}
              disabled={props.disabled}
              aria-describedby={`${panelId}-chunk-help`}
              onChange={(e) => props.onChange({ ...placement, prefillChunkTokens: e.target.value === '' ? Number.NaN : Number(e.target.value) })}
            />
            <p id={`${panelId}-chunk-help`} className="field-help">
              The prompt is processed this many tokens at a time (at most the model&apos;s context length). An NPU runs graphs
              compiled for exactly this many tokens: from {props.chunk.staticShapes.minTokens} to {props.chunk.staticShapes.maxTokens} when it
              takes part in prefill ({props.chunk.staticShapes.defaultTokens} by default).
            </p>
          </div>
          {PHASE_NAMES.map((phase) => (
            <PartitionEditor
              key={phase}
              phase={phase}
              placement={placement}
              devices={devices}
              matmulGroups={props.matmulGroups}
              disabled={props.disabled}
              onChange={props.onChange}
            />
          ))}
        </div>
      )}
    </div>
  )
}
