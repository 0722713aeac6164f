/** @file Platform details the UI shows (shortcut labels). */

/** True on Apple platforms, where shortcuts use ⌘ instead of Ctrl. */
export const IS_MAC = /Mac|iPhone|iPad/.test(navigator.platform)

/** Prefix for shortcut labels: "⌘" or "Ctrl+". */
export const MOD_KEY_LABEL = IS_MAC ? '⌘' : 'Ctrl+'
