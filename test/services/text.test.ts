/**
 * @file Hostile text at the edges (issue 10, item 9): automatic titles cut by graphemes, lone surrogates and
 * NUL normalised at the API boundary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { API_VALIDATORS, autoTitle } from '../../main/services'
import { API_LIMITS, type Conversation } from '../../preload/api'
import { appFixture, type AppFixture } from './app-fixture'

const LONE_SURROGATE = /\p{Cs}/u
const FAMILY = '👨‍👩‍👧‍👦'

describe('autoTitle', () => {
  it('keeps an emoji at the cut whole instead of splitting it into a lone surrogate', () => {
    const title = autoTitle(`${'a'.repeat(59)}😀 and then more words after the cut`)
    expect(LONE_SURROGATE.test(title)).toBe(false)
    expect(title).toBe(`${'a'.repeat(59)}😀…`)
  })

  it('counts a ZWJ family as one character and never breaks it', () => {
    const title = autoTitle(FAMILY.repeat(61))
    expect(title).toBe(`${FAMILY.repeat(Math.floor(API_LIMITS.maxTitleChars / FAMILY.length))}…`)
    expect(title.length).toBeLessThanOrEqual(API_LIMITS.maxTitleChars + 1)
    expect(autoTitle(`${FAMILY} family trip`)).toBe(`${FAMILY} family trip`)
    const mixed = autoTitle(`${'word '.repeat(11)}${FAMILY}${FAMILY} tail`)
    expect(mixed).toBe(`${'word '.repeat(11)}${FAMILY}${FAMILY}…`)
  })

  it('keeps short titles and word boundaries as before', () => {
    expect(autoTitle('  Hello there \nsecond line')).toBe('Hello there')
    expect(autoTitle(`${'word '.repeat(20)}`)).toBe(`${'word '.repeat(12).trimEnd()}…`)
  })
})

describe('text at the API boundary', () => {
  const send = (content: string): string => {
    const [request] = API_VALIDATORS['chat:send']([{ requestId: 'r', conversationId: 'c', content }])
    return request.content
  }

  it('replaces a lone surrogate and NUL with U+FFFD in messages, titles, system prompts and queries', () => {
    expect(send('\ud800')).toBe('\ufffd')
    expect(send('a\udc00b\ud83d')).toBe('a\ufffdb\ufffd')
    expect(send('before\u0000after')).toBe('before\ufffdafter')
    expect(send('ok 😀 👨‍👩‍👧‍👦')).toBe('ok 😀 👨‍👩‍👧‍👦') // pairs are untouched
    const [init] = API_VALIDATORS['conversations:create']([{ title: 'x\ud800\u0000', systemPrompt: '\u0000sys' }])
    expect(init).toEqual({ title: 'x\ufffd\ufffd', systemPrompt: '\ufffdsys' })
    expect(API_VALIDATORS['conversations:search'](['\ud800q\u0000'])).toEqual(['\ufffdq\ufffd'])
  })

  it('still refuses NUL in ids and paths', () => {
    expect(() => API_VALIDATORS['conversations:get'](['a\u0000b'])).toThrow(/id/)
    expect(() => API_VALIDATORS['models:addFolder'](['/tmp/a\u0000b'])).toThrow(/path/)
  })

  describe('through the app', () => {
    let f: AppFixture
    beforeAll(() => {
      f = appFixture({ modelDirs: [] })
    })
    afterAll(() => f.dispose())

    it('stores what the validator made of the text', async () => {
      const c = await f.ok<Conversation>('conversations:create', { title: 'trip\ud800\u0000plans' })
      expect(c.title).toBe('trip\ufffd\ufffdplans')
      expect(f.app.store.conversations.get(c.id)?.title).toBe('trip\ufffd\ufffdplans')
    })
  })
})
