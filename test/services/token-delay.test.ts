/**
 * The chat service's token delay (`tandem serve --token-delay-ms`), on fake timers. In a file of its own: the
 * chat tests run an app whose workers and samplers set timers of their own, which fake timers would count.
 */
import { expect, it, vi } from 'vitest'
import { tokenDelay } from '../../main/services'

it('tokenDelay waits its delay before resolving, and resolves at once when the request is aborted', async () => {
  vi.useFakeTimers()
  try {
    const wait = tokenDelay(20)
    const controller = new AbortController()
    let done = false
    void wait(controller.signal).then(() => (done = true))
    await vi.advanceTimersByTimeAsync(19)
    expect(done).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(done).toBe(true)
    let stopped = false
    void wait(controller.signal).then(() => (stopped = true))
    controller.abort()
    await Promise.resolve()
    expect(stopped).toBe(true)
    // already aborted: no wait at all
    let after = false
    void wait(controller.signal).then(() => (after = true))
    await Promise.resolve()
    expect(after).toBe(true)
    expect(vi.getTimerCount()).toBe(0)
  } finally {
    vi.useRealTimers()
  }
})
