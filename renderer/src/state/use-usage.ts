/**
 * @file Polls `devices.usage(sinceMs)` for the live utilization view: every 250 ms while a reply is being
 * generated (here, or anywhere the samples show tokens flowing), every second otherwise, every 5 s while the
 * page is hidden, and not at all while the view is closed. Each answer is appended to a 60 s ring; the next poll asks only for what is
 * newer than its newest sample, so nothing is fetched twice. Polls never overlap: the next is scheduled
 * when the previous one has answered.
 */
import { useEffect, useRef, useState } from 'react'
import { describeError, type UiError } from '../lib/errors'
import { LIMITS } from '../lib/limits'
import { UsageRing } from '../lib/usage-ring'
import { useApi } from './api-context'

/** Poll interval when nothing is being generated (ms). */
export const IDLE_POLL_MS = 1000

/** Poll interval while the page is hidden (ms): nobody is watching, but the window should not go stale. */
const HIDDEN_POLL_MS = 5000

/** After a failed poll, wait this long before the next (ms): the app may be busy or restarting. */
const RETRY_POLL_MS = 2000

/** What the usage hook exposes. */
export interface UsageState {
  /** the samples of the last 60 s; mutated in place, `version` says when */
  readonly ring: UsageRing
  /** bumped after every poll that brought new samples (re-render key) */
  readonly version: number
  /** the last poll's failure, cleared by the next success */
  readonly error: UiError | null
}

/** Keeps the ring filled while `enabled`; polls fast while `generating`. */
export function useUsage(enabled: boolean, generating: boolean): UsageState {
  const api = useApi()
  const ring = useRef(new UsageRing()).current
  const [version, setVersion] = useState(0)
  const [error, setError] = useState<UiError | null>(null)
  // Read when scheduling, so a change of `generating` speeds up the very next poll without a restart.
  const generatingRef = useRef(generating)
  generatingRef.current = generating

  // Starting a generation should not wait out an idle interval: it wakes the poller.
  const wake = useRef<(() => void) | null>(null)

  useEffect(() => {
    if (!enabled) return
    let stopped = false
    let inFlight = false
    let timer: number | undefined
    const poll = async (): Promise<void> => {
      inFlight = true
      let delayMs = IDLE_POLL_MS
      try {
        const samples = await api.devices.usage(ring.latestAtMs ?? 0)
        if (stopped) return
        if (ring.push(samples) > 0) setVersion((v) => v + 1)
        setError(null)
        const flowing = (ring.latest?.tokensPerSecond ?? 0) > 0
        delayMs = document.hidden ? HIDDEN_POLL_MS : generatingRef.current || flowing ? LIMITS.usageIntervalMs : IDLE_POLL_MS
      } catch (e) {
        if (stopped) return
        setError(describeError(e))
        delayMs = RETRY_POLL_MS
      } finally {
        inFlight = false
      }
      timer = window.setTimeout(() => void poll(), delayMs)
    }
    wake.current = () => {
      if (stopped || inFlight) return
      window.clearTimeout(timer)
      void poll()
    }
    // back in view: catch up at once instead of after the hidden interval
    const onVisible = (): void => {
      if (!document.hidden) wake.current?.()
    }
    document.addEventListener('visibilitychange', onVisible)
    void poll()
    return () => {
      stopped = true
      wake.current = null
      window.clearTimeout(timer)
      document.removeEventListener('visibilitychange', onVisible)
    }
  }, [api, enabled, ring])

  useEffect(() => {
    if (generating) wake.current?.()
  }, [generating])

  return { ring, version, error }
}
