// @vitest-environment happy-dom
/**
 * @file The progress shown in place of a reply while its model opens: a bar with its measure while a stage
 * has one, an indeterminate bar when it has none, and words for each stage (also the bar's accessible name).
 */
import { createElement } from 'react'
import { describe, expect, it } from 'vitest'
import { ModelLoadBar } from '../../renderer/src/components/ModelLoadBar'
import { formatBytes } from '../../renderer/src/lib/format'
import { render } from './render'

describe('ModelLoadBar', () => {
  it('shows a measured stage as value/max and says which step it is on', () => {
    const { container, rerender } = render(createElement(ModelLoadBar, { progress: { stage: 'compiling', done: 5, total: 18 } }))
    const bar = container.querySelector('progress')
    expect(bar?.getAttribute('value')).toBe('5')
    expect(bar?.getAttribute('max')).toBe('18')
    expect(bar?.getAttribute('aria-label')).toBe('Compiling the model for this computer: step 5 of 18')
    expect(container.textContent).toContain('step 5 of 18')
    rerender(createElement(ModelLoadBar, { progress: { stage: 'reading', done: 3_000_000, total: 12_000_000 } }))
    expect(container.textContent).toBe(`Checking the model file: ${formatBytes(3_000_000)} of ${formatBytes(12_000_000)}`)
  })

  it('is indeterminate while ONNX Runtime prepares (no measure)', () => {
    const { container } = render(createElement(ModelLoadBar, { progress: { stage: 'preparing', done: 0, total: 0 } }))
    const bar = container.querySelector('progress')
    expect(bar?.hasAttribute('value')).toBe(false)
    expect(container.textContent).toBe('Loading the model…')
  })
})
