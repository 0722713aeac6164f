// @vitest-environment happy-dom
/**
 * @file useLoad, rendered for real (React DOM in happy-dom, under StrictMode like the app): the newest
 * request's answer lands, superseded answers and their failures are dropped, and a reset or an unmount drops
 * what is in flight. Requests are deferred promises settled by hand, so the order is chosen, never timed.
 */
import { act } from 'react'
import { describe, expect, it, vi } from 'vitest'
import type { UiError } from '../../renderer/src/lib/errors'
import { useLoad, type Load } from '../../renderer/src/state/use-load'
import { deferred, renderHook, settle, type RenderedHook } from './render'

/** Mounts a component that calls useLoad. */
const mount = (initiallyLoading?: boolean): RenderedHook<boolean | undefined, Load> => renderHook(useLoad, initiallyLoading)

/** Starts a run inside act(); the returned promise is the run's own. */
function start<T>(load: Load, task: () => Promise<T>, apply: (value: T) => void, keepError?: boolean): Promise<UiError | null> {
  let done: Promise<UiError | null> = Promise.resolve(null)
  act(() => {
    done = load.run(task, apply, keepError === undefined ? undefined : { keepError })
  })
  return done
}

/** A loading hook with two runs started, the older first; each answer is settled by the test. */
function twoRuns() {
  const view = mount(true)
  const older = deferred<string>()
  const newer = deferred<string>()
  const apply = vi.fn()
  start(view.current, () => older.promise, apply)
  start(view.current, () => newer.promise, apply)
  return { view, older, newer, apply }
}

describe('useLoad', () => {
  it('starts loading only when asked, and a run clears loading and applies its value', async () => {
    expect(mount().current.loading).toBe(false)
    const view = mount(true)
    expect(view.current).toMatchObject({ loading: true, error: null })
    const request = deferred<string>()
    const apply = vi.fn()
    const done = start(view.current, () => request.promise, apply)
    expect(view.current.loading).toBe(true)
    await settle(() => request.resolve('list'))
    expect(apply).toHaveBeenCalledExactlyOnceWith('list')
    expect(view.current).toMatchObject({ loading: false, error: null })
    await expect(done).resolves.toBeNull()
  })

  it('keeps a failure in error and hands it back, until a later success clears it', async () => {
    const view = mount(true)
    const failing = deferred<string>()
    const done = start(view.current, () => failing.promise, vi.fn())
    await settle(() => failing.reject({ name: 'NotFoundError', message: 'no such conversation' }))
    expect(view.current.loading).toBe(false)
    expect(view.current.error).toMatchObject({ title: 'Not found', detail: 'no such conversation' })
    await expect(done).resolves.toMatchObject({ title: 'Not found' })

    const next = deferred<string>()
    start(view.current, () => next.promise, vi.fn())
    await settle(() => next.resolve('ok'))
    expect(view.current.error).toBeNull()
  })

  it('counts a task that throws before it returns a promise as a failure', async () => {
    const view = mount()
    let done: Promise<UiError | null> = Promise.resolve(null)
    await act(async () => {
      done = view.current.run(() => {
        throw new Error('bad arguments')
      }, vi.fn())
      await done
    })
    expect(view.current.error?.detail).toBe('bad arguments')
    await expect(done).resolves.toMatchObject({ detail: 'bad arguments' })
  })

  it('drops an older answer that arrives after a newer one', async () => {
    const { older, newer, apply } = twoRuns()
    await settle(() => newer.resolve('newer'))
    await settle(() => older.resolve('older'))
    expect(apply.mock.calls).toEqual([['newer']])
  })

  it('drops an older answer that arrives first: still loading until the newest settles', async () => {
    const { view, older, newer, apply } = twoRuns()
    await settle(() => older.resolve('older'))
    expect(apply).not.toHaveBeenCalled()
    expect(view.current.loading).toBe(true)
    await settle(() => newer.resolve('newer'))
    expect(apply.mock.calls).toEqual([['newer']])
    expect(view.current.loading).toBe(false)
  })

  it("drops an older request's failure, but still hands it back to its caller", async () => {
    const view = mount()
    const older = deferred<string>()
    const newer = deferred<string>()
    const olderDone = start(view.current, () => older.promise, vi.fn())
    start(view.current, () => newer.promise, vi.fn())
    await settle(() => older.reject(new Error('too late to matter')))
    expect(view.current.error).toBeNull()
    await expect(olderDone).resolves.toMatchObject({ detail: 'too late to matter' })
    await settle(() => newer.resolve('fine'))
    expect(view.current.error).toBeNull()
  })

  it('reset drops the request in flight and sets loading as given, with no error', async () => {
    const view = mount()
    const failed = deferred<string>()
    start(view.current, () => failed.promise, vi.fn())
    await settle(() => failed.reject(new Error('first subject failed')))
    expect(view.current.error).not.toBeNull()

    const pending = deferred<string>()
    const apply = vi.fn()
    start(view.current, () => pending.promise, apply)
    act(() => view.current.reset(true))
    expect(view.current).toMatchObject({ loading: true, error: null })
    await settle(() => pending.resolve('old subject'))
    expect(apply).not.toHaveBeenCalled()
    expect(view.current.loading).toBe(true)

    act(() => view.current.reset(false))
    expect(view.current.loading).toBe(false)
  })

  it('with keepError false, a failure is only handed back, and a success still clears an earlier error', async () => {
    const view = mount()
    const load = deferred<string>()
    start(view.current, () => load.promise, vi.fn())
    await settle(() => load.reject(new Error('read failed')))
    expect(view.current.error?.detail).toBe('read failed')

    const refusedSave = deferred<string>()
    const refused = start(view.current, () => refusedSave.promise, vi.fn(), false)
    await settle(() => refusedSave.reject({ name: 'ValidationError', message: 'no such device' }))
    await expect(refused).resolves.toMatchObject({ detail: 'no such device' })
    expect(view.current.error?.detail).toBe('read failed')

    const save = deferred<string>()
    const apply = vi.fn()
    start(view.current, () => save.promise, apply, false)
    await settle(() => save.resolve('saved view'))
    expect(apply).toHaveBeenCalledExactlyOnceWith('saved view')
    expect(view.current.error).toBeNull()
  })

  it('drops an answer that arrives after unmount', async () => {
    const view = mount(true)
    const pending = deferred<string>()
    const apply = vi.fn()
    const done = start(view.current, () => pending.promise, apply)
    view.unmount()
    pending.resolve('late')
    await expect(done).resolves.toBeNull()
    expect(apply).not.toHaveBeenCalled()
  })

  it('keeps run and reset the same functions across renders, so callers can list them as effect dependencies', async () => {
    const view = mount(true)
    const request = deferred<string>()
    start(view.current, () => request.promise, vi.fn())
    await settle(() => request.resolve('x'))
    act(() => view.current.reset(true))
    const first = view.renders[0]
    expect(view.renders.length).toBeGreaterThan(2)
    for (const load of view.renders) {
      expect(load.run).toBe(first?.run)
      expect(load.reset).toBe(first?.reset)
    }
  })
})
