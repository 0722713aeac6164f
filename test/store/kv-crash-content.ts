/** @file What the KV crash writer saves, shared with the test that checks it: deterministic tokens and bytes per block. */
export const KV_CRASH = {
  fingerprint: 'kv-crash-test-model',
  blockTokens: 64,
  bytesPerToken: 16 * 1024,
  tokens: (block: number): number[] => Array.from({ length: 64 }, (_, i) => 1 + block * 64 + i),
  data: (block: number): Uint8Array => Uint8Array.from({ length: 64 * 16 * 1024 }, (_, i) => (block * 131 + i * 7) & 0xff)
}
