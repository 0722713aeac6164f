import { describe, expect, it } from 'vitest'
import { StopStringFilter } from '../../main/engine/runtime/generation/stop-text'

function stream(stops: string[], pieces: string[]): { shown: string; hit: boolean } {
  const f = new StopStringFilter(stops)
  let shown = ''
  for (const p of pieces) {
    shown += f.push(p)
    if (f.hit) break
  }
  return { shown: shown + f.flush(), hit: f.hit }
}

describe('stop strings', () => {
  it('stops before a stop string split across pieces and never shows it', () => {
    expect(stream(['\nUser:'], ['Hello', ' there\nU', 'ser', ': more'])).toEqual({ shown: 'Hello there', hit: true })
  })
  it('releases held-back text that turned out not to be a stop string', () => {
    expect(stream(['END'], ['the E', 'ND', 'x'])).toEqual({ shown: 'the ', hit: true })
    expect(stream(['END'], ['the E', 'ast'])).toEqual({ shown: 'the East', hit: false })
    expect(stream(['END'], ['trailing E'])).toEqual({ shown: 'trailing E', hit: false })
  })
  it('picks the earliest of several stop strings', () => {
    expect(stream(['bb', 'a'], ['xxabb'])).toEqual({ shown: 'xx', hit: true })
  })
  it('rejects an empty stop string', () => {
    expect(() => new StopStringFilter([''])).toThrow(/empty/)
  })
})
