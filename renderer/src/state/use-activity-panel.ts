/**
 * @file Whether the live device activity panel is open: remembered in localStorage; the first time, open on
 * windows wide enough to show it beside the chat and closed on narrow ones (there it pushes the messages).
 */
import { useCallback, useState } from 'react'

/** localStorage key of the panel's open state ('1' / '0'). */
const STORAGE_KEY = 'tandem.activityPanel'

/** Window width (CSS px) from which the panel starts open. */
const OPEN_BY_DEFAULT_FROM_PX = 1100

function initial(): boolean {
  try {
    const stored = window.localStorage.getItem(STORAGE_KEY)
    if (stored === '1' || stored === '0') return stored === '1'
  } catch {
    // storage disabled: fall through to the default
  }
  return window.innerWidth >= OPEN_BY_DEFAULT_FROM_PX
}

/** [open, setOpen]; setOpen remembers the choice. */
export function useActivityPanel(): [boolean, (open: boolean) => void] {
  const [open, setOpenState] = useState(initial)
  const setOpen = useCallback((value: boolean) => {
    setOpenState(value)
    try {
      window.localStorage.setItem(STORAGE_KEY, value ? '1' : '0')
    } catch {
      // storage disabled: remembered for this page only
    }
  }, [])
  return [open, setOpen]
}
