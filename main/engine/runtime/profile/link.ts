/**
 * @file The hand-off cost between devices, measured on the runtime's own path: a DeviceHost and its device
 * worker. A task handed from one device to another costs a coordinator round trip through the control block
 * (the producer's done wakes the coordinator, which wakes the consumer) plus two copies of the tensor (the
 * producer's output into the shared value arena, the consumer's copy out into a buffer ORT accepts). So
 * fixedMs is the median empty command round trip (`ping`), and msPerMiB the extra time per MiB of an `echo`
 * (the worker copies a slot out of the arena and back) at the largest size. Every device is a thread of
 * this process on the same mechanism, so one measurement stands for every device pair.
 */
import { DeviceHost } from '../hetero/device-host'
import { ValueArena } from '../hetero/value-arena'
import { UsageBoard } from '../usage'

/** Payload sizes timed (bytes): a decode-sized and a prefill-sized activation; size 0 is the ping. */
export const LINK_SIZES_BYTES: readonly number[] = Object.freeze([0, 256 * 1024, 4 * 1024 * 1024])
/** Timed round trips per size (small payloads are µs each, so take many). */
const LINK_REPS: readonly number[] = [400, 100, 30]
/** Untimed round trips first, per size. */
const LINK_WARMUP = 10

const MIB = 2 ** 20
const LINK_SLOT = 'link'

/** One timed size: the median command round trip, ms. */
export interface LinkSample {
  readonly bytes: number
  readonly roundTripMs: number
}

/** The fitted hand-off cost and the samples it came from. */
export interface LinkMeasurement {
  readonly fixedMs: number
  readonly msPerMiB: number
  readonly samples: readonly LinkSample[]
}

function median(values: number[]): number {
  values.sort((a, b) => a - b)
  const mid = values.length >> 1
  return values.length % 2 === 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2
}

/** fixedMs from the empty round trip, msPerMiB from the largest payload's extra time. */
export function fitLink(samples: readonly LinkSample[]): { fixedMs: number; msPerMiB: number } {
  const empty = samples.find((s) => s.bytes === 0) ?? samples[0]
  const largest = samples.reduce((a, b) => (b.bytes > a.bytes ? b : a))
  const msPerMiB = largest.bytes > empty.bytes ? Math.max(0, largest.roundTripMs - empty.roundTripMs) / ((largest.bytes - empty.bytes) / MIB) : 0
  return { fixedMs: empty.roundTripMs, msPerMiB }
}

/** Measures the hand-off with a CPU device worker of its own; the worker has exited when this settles. */
export async function measureLink(signal?: AbortSignal): Promise<LinkMeasurement> {
  signal?.throwIfAborted()
  const floats = Math.max(...LINK_SIZES_BYTES) / 4
  const arena = ValueArena.create([{ name: LINK_SLOT, width: floats, rows: 1 }])
  const host = DeviceHost.start({ deviceId: 'link', ep: 'cpu', threads: 1, arena: arena.init, usage: new UsageBoard().buffer, usageSlot: 0, kv: { nKvHeads: 1, headDim: 1, maxLen: 1 } })
  try {
    const slot = arena.slotIndex(LINK_SLOT)
    const samples: LinkSample[] = []
    for (const [i, bytes] of LINK_SIZES_BYTES.entries()) {
      const once = (): Promise<void> => (bytes === 0 ? host.ping() : host.echo(slot, bytes / 4))
      for (let r = 0; r < LINK_WARMUP; r++) await once()
      const times: number[] = []
      for (let r = 0; r < LINK_REPS[i]; r++) {
        const t0 = performance.now()
        await once()
        times.push(performance.now() - t0)
      }
      signal?.throwIfAborted()
      samples.push({ bytes, roundTripMs: median(times) })
    }
    return { ...fitLink(samples), samples }
  } finally {
    await host.dispose()
  }
}
