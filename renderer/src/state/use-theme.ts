/** @file Applies the theme setting to <html data-theme>; "system" leaves it to prefers-color-scheme in CSS. */
import { useEffect } from 'react'
import type { ThemeSetting } from '../../../preload/api'

/** Sets or clears `data-theme` on the document element when the setting changes. */
export function useTheme(theme: ThemeSetting): void {
  useEffect(() => {
    const root = document.documentElement
    if (theme === 'system') delete root.dataset.theme
    else root.dataset.theme = theme
  }, [theme])
}
