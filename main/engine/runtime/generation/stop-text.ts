/**
 * @file Stop strings over streamed text: text that might be the start of a stop string is held back
 * until it is clearly not, so a stop string never reaches the user, even split across tokens.
 */

/** Feeds streamed text through; reports what may be shown and whether a stop string was hit. */
export class StopStringFilter {
  private pending = ''
  private stopped = false

  constructor(private readonly stops: readonly string[]) {
    for (const s of stops) if (s.length === 0) throw new RangeError('stop strings must not be empty')
  }

  get hit(): boolean {
    return this.stopped
  }

  /** Adds new text; returns the part that is safe to emit now. */
  push(text: string): string {
    if (this.stopped) return ''
    this.pending += text
    let cut = -1
    for (const s of this.stops) {
      const at = this.pending.indexOf(s)
      if (at >= 0 && (cut < 0 || at < cut)) cut = at
    }
    if (cut >= 0) {
      this.stopped = true
      const out = this.pending.slice(0, cut)
      this.pending = ''
      return out
    }
    // hold back the longest suffix that is a proper prefix of some stop string
    let hold = 0
    for (const s of this.stops) {
      for (let n = Math.min(s.length - 1, this.pending.length); n > hold; n--) {
        if (this.pending.endsWith(s.slice(0, n))) {
          hold = n
          break
        }
      }
    }
    const out = this.pending.slice(0, this.pending.length - hold)
    this.pending = this.pending.slice(this.pending.length - hold)
    return out
  }

  /** End of generation: whatever was held back is real text. */
  flush(): string {
    const out = this.stopped ? '' : this.pending
    this.pending = ''
    return out
  }
}
