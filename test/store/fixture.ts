/** @file A store on a real SQLite file in a temp dir, with a clock the test moves by hand. */
import { join } from 'node:path'
import { openStore, type Store } from '../../main/store'
import { tempDir } from '../helpers/paths'

/** A fake clock in ms; starts at a fixed time and only moves when told. */
export interface FakeClock {
  now(): number
  advance(ms: number): void
}

export function fakeClock(startMs = 1_700_000_000_000): FakeClock {
  let t = startMs
  return { now: () => t, advance: (ms) => (t += ms) }
}

/** An open store plus its file, clock and cleanup (closes the store, removes the folder). */
export interface StoreFixture {
  readonly store: Store
  readonly file: string
  readonly clock: FakeClock
  /** closes and reopens the same file (same clock); returns the new store */
  reopen(): Store
  dispose(): void
}

export function storeFixture(): StoreFixture {
  const scratch = tempDir('tandem-store-')
  const file = join(scratch.dir, 'tandem.db')
  const clock = fakeClock()
  let store = openStore(file, { now: clock.now })
  return {
    get store() {
      return store
    },
    file,
    clock,
    reopen() {
      store.close()
      store = openStore(file, { now: clock.now })
      return store
    },
    dispose() {
      if (store.db.open) store.close()
      scratch.dispose()
    }
  }
}
