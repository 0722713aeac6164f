// @vitest-environment happy-dom
/**
 * @file useEdits, which the settings forms are built on: a form shows the saved values, including ones that
 * arrive after it opened, until the user edits it; then it keeps their text (test/e2e/settings.spec.ts
 * checks the Settings dialog itself).
 */
import { act } from 'react'
import { describe, expect, it } from 'vitest'
import { useEdits, type Edits } from '../../renderer/src/state/use-edits'
import { renderHook } from './render'

describe('useEdits', () => {
  it('follows the saved value until edited, then keeps the edit whatever is saved', () => {
    const view = renderHook<string, Edits<string>>(useEdits, 'saved 1')
    expect(view.current).toMatchObject({ value: 'saved 1', edited: false })
    view.rerender('saved 2')
    expect(view.current.value).toBe('saved 2')
    act(() => view.current.edit('typed'))
    view.rerender('saved 3')
    expect(view.current).toMatchObject({ value: 'typed', edited: true })
    act(() => view.current.discard())
    expect(view.current).toMatchObject({ value: 'saved 3', edited: false })
  })

  it('counts an edit to an empty value as an edit', () => {
    const view = renderHook<string, Edits<string>>(useEdits, 'saved')
    act(() => view.current.edit(''))
    expect(view.current).toMatchObject({ value: '', edited: true })
  })

  it('discardIfStill drops only the edit it names, so text typed during a save survives it', () => {
    const saving = { text: 'a' }
    const view = renderHook<{ text: string }, Edits<{ text: string }>>(useEdits, { text: 'saved' })
    act(() => view.current.edit(saving))
    act(() => view.current.edit({ text: 'ab' }))
    act(() => view.current.discardIfStill(saving))
    expect(view.current.value).toEqual({ text: 'ab' })
    const latest = view.current.value
    act(() => view.current.discardIfStill(latest))
    expect(view.current).toMatchObject({ value: { text: 'saved' }, edited: false })
  })
})
