/**
 * @file Matches a token sequence against stored KV blocks and reads each block's data the way a restore does:
 * block by block, stopping at the first that fails its checks (the store then reports why and removes it).
 */
import type { KvBlockRef, Store } from '../../main/store'

export interface ReadMatch {
  readonly tokens: number
  readonly blocks: readonly (KvBlockRef & { readonly data: Uint8Array })[]
  readonly problems: readonly string[]
}

/** The chain `tokens` begins with under `root`, read with `bytesPerToken` bytes per position. */
export function matchAndRead(store: Store, root: string, tokens: readonly number[], bytesPerToken: number): ReadMatch {
  const m = store.kvBlocks.match(root, tokens)
  const blocks: (KvBlockRef & { readonly data: Uint8Array })[] = []
  const problems = [...m.problems]
  for (const b of m.blocks) {
    const data = store.kvBlocks.read(b, b.tokenCount * bytesPerToken)
    if (typeof data === 'string') {
      problems.push(data)
      break
    }
    blocks.push({ ...b, data })
  }
  return { tokens: blocks.reduce((n, b) => n + b.tokenCount, 0), blocks, problems }
}
