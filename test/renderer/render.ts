/**
 * @file Rendering React for real in Vitest: React DOM in the happy-dom environment, under StrictMode like the
 * app. A test file opts in with `// @vitest-environment happy-dom` as its first line. Everything rendered is
 * unmounted after each test.
 */
import type { Document, Element } from 'happy-dom'
import { act, createElement, StrictMode, type ReactElement } from 'react'
import { createRoot } from 'react-dom/client'
import { afterEach } from 'vitest'

// The environment's page. This project has no DOM types (main and the tests share it), so the document is
// typed by happy-dom, for this file alone.
declare const document: Document

// React reads this to know that updates are wrapped in act() here.
Reflect.set(globalThis, 'IS_REACT_ACT_ENVIRONMENT', true)

const mounted = new Set<() => void>()
afterEach(() => {
  for (const unmount of mounted) unmount()
})

/** A mounted element: its container, and a way to render it again with new props. */
export interface Rendered {
  readonly container: Element
  readonly rerender: (element: ReactElement) => void
  readonly unmount: () => void
}

/** Mounts `element` in a fresh container attached to the page. */
export function render(element: ReactElement): Rendered {
  const container = document.createElement('div')
  document.body.appendChild(container)
  const root = createRoot(container)
  const show = (next: ReactElement): void => act(() => root.render(createElement(StrictMode, null, next)))
  show(element)
  const unmount = (): void => {
    if (!mounted.delete(unmount)) return
    act(() => root.unmount())
    container.remove()
  }
  mounted.add(unmount)
  return { container, rerender: show, unmount }
}

/** A mounted hook: what its latest render returned, every render's result, and a re-render with new props. */
export interface RenderedHook<P, R> {
  readonly current: R
  readonly renders: readonly R[]
  readonly rerender: (props: P) => void
  readonly unmount: () => void
}

/** Mounts a component that calls `hook(props)`. */
export function renderHook<P, R>(hook: (props: P) => R, props: P): RenderedHook<P, R> {
  const renders: R[] = []
  function Probe({ hookProps }: { hookProps: P }): null {
    renders.push(hook(hookProps))
    return null
  }
  const rendered = render(createElement(Probe, { hookProps: props }))
  return {
    get current(): R {
      if (renders.length === 0) throw new Error('the hook never rendered')
      return renders[renders.length - 1]
    },
    renders,
    rerender: (next) => rendered.rerender(createElement(Probe, { hookProps: next })),
    unmount: rendered.unmount
  }
}

/** Runs `action` (which settles a promise by hand) and lets React apply what follows. */
export async function settle(action: () => void): Promise<void> {
  await act(async () => {
    action()
    await Promise.resolve()
  })
}

/** A promise settled from outside, so tests choose the order of answers instead of timing them. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (reason: unknown) => void } {
  let resolve: (value: T) => void = () => undefined
  let reject: (reason: unknown) => void = () => undefined
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

