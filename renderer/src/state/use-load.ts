/**
 * @file The bookkeeping every load in the renderer needs: whether it is loading, its failure, and a sequence
 * number so that only the newest request's answer lands. Requests can answer out of order (a slow search for
 * "ab" after a fast one for "abc", a conversation left before it arrived); a superseded answer, and its
 * failure, are dropped. The caller keeps its own data and receives a run's value through `apply`, so data
 * that also changes by other means (streamed replies, a renamed conversation) stays in one place.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import { describeError, type UiError } from '../lib/errors'

/** Options of one run. */
export interface RunOptions {
  /**
   * Whether a failure is kept in `error` (default true). A save passes false: its form shows the failure
   * it is handed back, and what was loaded before is still valid.
   */
  readonly keepError?: boolean
}

/** What `useLoad` exposes; `run` and `reset` keep their identity for the component's lifetime. */
export interface Load {
  /** true from `reset(true)` (or from the start, when asked) until the newest run settles */
  readonly loading: boolean
  /** the newest run's failure, cleared by a later success or a reset */
  readonly error: UiError | null
  /**
   * Starts `task` as the newest request. Unless a newer run or a reset started meanwhile (or the component
   * unmounted), its value goes to `apply` and its failure into `error`. Resolves with the failure, dropped or
   * not, or null; never rejects.
   */
  readonly run: <T>(task: () => Promise<T>, apply: (value: T) => void, options?: RunOptions) => Promise<UiError | null>
  /** Drops the request in flight and starts over with `loading` as given and no error (a new subject). */
  readonly reset: (loading: boolean) => void
}

/** One load's state; `initiallyLoading` for data the view waits for from the start. */
export function useLoad(initiallyLoading = false): Load {
  const [loading, setLoading] = useState(initiallyLoading)
  const [error, setError] = useState<UiError | null>(null)
  // Bumped by every run, reset and unmount: a request whose number is no longer current is ignored.
  const seq = useRef(0)

  useEffect(
    () => () => {
      seq.current++
    },
    []
  )

  const run = useCallback(
    async <T>(task: () => Promise<T>, apply: (value: T) => void, options: RunOptions = {}): Promise<UiError | null> => {
      const mine = ++seq.current
      let value: T
      try {
        value = await task()
      } catch (e) {
        const failure = describeError(e)
        if (mine === seq.current) {
          if (options.keepError !== false) setError(failure)
          setLoading(false)
        }
        return failure
      }
      if (mine === seq.current) {
        apply(value)
        setError(null)
        setLoading(false)
      }
      return null
    },
    []
  )

  const reset = useCallback((nextLoading: boolean) => {
    seq.current++
    setLoading(nextLoading)
    setError(null)
  }, [])

  return useMemo(() => ({ loading, error, run, reset }), [loading, error, run, reset])
}
