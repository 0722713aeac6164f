/** @file Limits both worker wire protocols (the model worker's and the device workers') check what they receive against. */

/** Largest position or context length accepted on the wire. */
export const MAX_POSITION = 1 << 24
/** Longest path (or session key) accepted on the wire. */
export const MAX_PATH_LENGTH = 4096
