/**
 * @file The splits of one phase in the advanced placement editor: a matrix-multiplication group divided
 * between two devices, either by weight rows (a share slider) or, in prefill, by sequence (a standard
 * length of each chunk on the first device, the rest on the second).
 */
import type { JSX } from 'react'
import type { DeviceView, PlacementJson } from '../../../preload/api'
import { deviceName } from '../lib/devices'
import { addPartition, newPartition, removePartition, reshapePartition, updatePartition, type PartitionEntry, type PhaseName } from '../lib/placement-edit'
import { DeviceSelect } from './DeviceSelect'

/** Row split shares offered by the slider (percent on the first device). */
const SHARE_MIN = 5
const SHARE_MAX = 95
const SHARE_STEP = 5

interface PartitionEditorProps {
  readonly phase: PhaseName
  readonly placement: PlacementJson
  readonly devices: readonly DeviceView[]
  readonly matmulGroups: readonly string[]
  readonly disabled: boolean
  readonly onChange: (placement: PlacementJson) => void
}

interface RowProps extends PartitionEditorProps {
  readonly index: number
  readonly part: PartitionEntry
}

function SplitRow(props: RowProps): JSX.Element {
  const { phase, placement, devices, index, part } = props
  const id = `split-${phase}-${index}`
  const where = `${phase === 'prefill' ? 'Prefill' : 'Decode'} split ${index + 1}`
  const chunk = placement.prefillChunkTokens
  const set = (next: PartitionEntry): void => props.onChange(updatePartition(placement, phase, index, next))
  const reshape = (change: Parameters<typeof reshapePartition>[1]): void => set(reshapePartition(part, change, chunk))
  const [a, b] = part.devices
  const sequenceAllowed = phase === 'prefill' && part.group !== 'lm-head'
  return (
    <li className="split-row">
      <div className="split-fields">
        <div className="field">
          <label htmlFor={`${id}-group`}>Op group</label>
          <select id={`${id}-group`} aria-label={`${where}: op group`} value={part.group} disabled={props.disabled} onChange={(e) => reshape({ group: e.target.value, ...(e.target.value === 'lm-head' ? { by: 'rows' as const } : {}) })}>
            {!props.matmulGroups.includes(part.group) && <option value={part.group}>{part.group}</option>}
            {props.matmulGroups.map((g) => (
              <option key={g} value={g}>
                {g}
              </option>
            ))}
          </select>
          {typeof part.layer === 'number' && <span className="field-help">layer {part.layer} only</span>}
        </div>
        <div className="field">
          <label htmlFor={`${id}-by`}>Split by</label>
          <select id={`${id}-by`} aria-label={`${where}: split by`} value={part.by} disabled={props.disabled} onChange={(e) => reshape({ by: e.target.value === 'sequence' ? 'sequence' : 'rows' })}>
            <option value="rows">Weight rows</option>
            <option value="sequence" disabled={!sequenceAllowed && part.by !== 'sequence'}>
              Sequence (prefill)
            </option>
          </select>
        </div>
        <div className="field">
          <DeviceSelect id={`${id}-a`} label="First device" visibleLabel ariaLabel={`${where}: first device`} devices={devices} value={a} disabled={props.disabled} onChange={(v) => reshape({ devices: [v, b] })} />
        </div>
        <div className="field">
          <DeviceSelect id={`${id}-b`} label="Second device" visibleLabel ariaLabel={`${where}: second device`} devices={devices} value={b} disabled={props.disabled} onChange={(v) => reshape({ devices: [a, v] })} />
        </div>
      </div>
      <div className="split-amount">
        {part.by === 'rows' ? (
          <>
            <label htmlFor={`${id}-share`} className="visually-hidden">
              {where}: share of the rows on the first device
            </label>
            <input
              id={`${id}-share`}
              type="range"
              min={SHARE_MIN}
              max={SHARE_MAX}
              step={SHARE_STEP}
              value={Math.round(part.ratio * 100)}
              disabled={props.disabled}
              aria-valuetext={`${Math.round(part.ratio * 100)}% on ${deviceName(a, devices)}`}
              onChange={(e) => set({ ...part, ratio: Number(e.target.value) / 100 })}
            />
            <output htmlFor={`${id}-share`} className="split-share">
              {Math.round(part.ratio * 100)}% on {deviceName(a, devices)} · {100 - Math.round(part.ratio * 100)}% on {deviceName(b, devices)}
            </output>
          </>
        ) : (
          <>
            <label htmlFor={`${id}-length`}>Standard length</label>
            <input
              id={`${id}-length`}
              type="number"
              inputMode="numeric"
              min={1}
              max={Math.max(1, chunk - 1)}
              step={1}
              value={Number.isFinite(part.standardLength) ? part.standardLength : ''}
              disabled={props.disabled}
              aria-describedby={`${id}-length-help`}
              onChange={(e) => set({ ...part, standardLength: e.target.value === '' ? Number.NaN : Number(e.target.value) })}
            />
            <span id={`${id}-length-help`} className="field-help">
              tokens of each {chunk}-token chunk on {deviceName(a, devices)}; the rest on {deviceName(b, devices)}
            </span>
          </>
        )}
        <span className="spacer" />
        <button type="button" className="button-ghost button-small" aria-label={`Remove ${where.toLowerCase()}`} disabled={props.disabled} onClick={() => props.onChange(removePartition(placement, phase, index))}>
          Remove
        </button>
      </div>
    </li>
  )
}

/** The split list of one phase, with "Add split". */
export function PartitionEditor(props: PartitionEditorProps): JSX.Element {
  const { phase, placement, devices, matmulGroups } = props
  const ready = devices.filter((d) => d.status === 'ready')
  const label = phase === 'prefill' ? 'Prefill' : 'Decode'
  // a new split helps the stage's own device with another one; the halves are joined on devices[0]
  const main = ready.find((d) => d.id === placement.phases[phase].device) ?? ready[0]
  const other = ready.find((d) => d.id !== main?.id)
  const group = matmulGroups[0]
  const pair: readonly [string, string] | null = main !== undefined && other !== undefined ? [other.id, main.id] : null
  const partitions = placement.phases[phase].partitions
  return (
    <div className="split-editor">
      <h5 className="split-title">{label} splits</h5>
      {partitions.length === 0 ? (
        <p className="field-help">No {label.toLowerCase()} splits.</p>
      ) : (
        <ul className="split-list" aria-label={`${label} splits`}>
          {partitions.map((part, index) => (
            <SplitRow key={index} {...props} index={index} part={part} />
          ))}
        </ul>
      )}
      <button
        type="button"
        className="button-secondary button-small"
        disabled={props.disabled || pair === null || group === undefined}
        title={pair === null ? 'A split needs two ready devices.' : undefined}
        onClick={() => {
          if (pair !== null && group !== undefined) props.onChange(addPartition(placement, phase, newPartition(group, pair)))
        }}
      >
        Add {label.toLowerCase()} split
      </button>
    </div>
  )
}
