/**
 * @file Settings → Devices → Integer NPUs: W8A8 layer matmuls (what integer NPUs run) and how many layers skip
 * llm.npu's shadow segments, which repair the outliers int8 clips on a float device.
 */
import { useState, type JSX } from 'react'
import { errorText } from '../lib/errors'
import type { SettingsState } from '../state/use-settings'
import { FormStatus, type FormStatusValue } from './FormError'
import { SwitchWithNumber } from './SwitchWithNumber'

/** The W8A8 switch and the shadow's pruning, saved as they change. */
export function NpuQuantizationSection({ state }: { state: SettingsState }): JSX.Element | null {
  const current = state.settings?.npuQuantization ?? null
  const [percent, setPercent] = useState<string | null>(null)
  const [status, setStatus] = useState<FormStatusValue | null>(null)
  if (current === null) return null
  const shown = percent ?? String(current.shadowPrunedPercent)
  const save = (w8a8: boolean, text: string): void => {
    const n = Number(text)
    if (text.trim() === '' || !Number.isFinite(n) || n < 0 || n > 100) {
      setStatus({ ok: false, text: 'The share of layers without a shadow is a number from 0 to 100.' })
      return
    }
    void state.update({ npuQuantization: { w8a8, shadowPrunedPercent: n } }).then((failure) => {
      if (failure === null) setPercent(null)
      setStatus(failure === null ? { ok: true, text: 'Saved. It applies from the next reply.' } : { ok: false, text: errorText(failure) })
    })
  }
  return (
    <section className="settings-section" aria-labelledby="settings-npu-quantization">
      <h3 id="settings-npu-quantization">Integer NPUs</h3>
      <p className="field-help">
        Many laptop NPUs compute only in 8-bit integers. W8A8 runs the layers&apos; matrix multiplications placed on an NPU that way, and shadow segments on the CPU
        repair the few large values that 8 bits cut off. It needs the model calibrated once: <code>npx tandem calibrate --model PATH --corpus FILE</code>.
      </p>
      <SwitchWithNumber
        switchLabel="Run NPU matmuls in W8A8"
        checked={current.w8a8}
        numberId="shadow-pruned"
        numberLabel="Layers without a shadow (%)"
        min={0}
        max={100}
        step={1}
        value={shown}
        onValueChange={setPercent}
        onSave={save}
      />
      <p className="field-help">The least important layers (by calibration) go without one. llm.npu skips 85%; 0 repairs every layer, 100 none.</p>
      <FormStatus status={status} />
    </section>
  )
}
