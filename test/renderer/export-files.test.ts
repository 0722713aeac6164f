/** The renderer's export file names and the sentence that says what an import did. */
import { describe, expect, it } from 'vitest'
import type { ConversationSummary, ImportResult } from '../../preload/api'
import { allConversationsFileName, exportFileName, importSummary } from '../../renderer/src/lib/export-files'

const summary = (id: string): ConversationSummary => ({ id, title: id, parentId: null, modelId: null, createdAtMs: 1, updatedAtMs: 1 })
const result = (imported: number, duplicates: string[]): ImportResult => ({
  imported: Array.from({ length: imported }, (_, i) => summary(`c${i}`)),
  duplicates: duplicates.map((title, i) => ({ id: `d${i}`, title }))
})

describe('export file names', () => {
  it('come from the title, without what file systems refuse', () => {
    expect(exportFileName('Trip plans', 'markdown')).toBe('Trip plans.md')
    expect(exportFileName('a/b: c?*', 'json')).toBe('a b c.json')
    expect(exportFileName('..hidden', 'json')).toBe('hidden.json')
    expect(exportFileName('   ', 'markdown')).toBe('Untitled chat.md')
    expect(exportFileName('x'.repeat(300), 'json')).toBe(`${'x'.repeat(100)}.json`)
    expect(allConversationsFileName(new Date(2026, 0, 5))).toBe('tandem-conversations-2026-01-05.json')
  })
})

describe('import summary', () => {
  it('counts what was imported and names what was already here', () => {
    expect(importSummary(result(3, ['Trip plans']))).toBe('Imported 3 conversations; 1 was already here: “Trip plans”.')
    expect(importSummary(result(1, []))).toBe('Imported 1 conversation.')
    expect(importSummary(result(0, ['A', '', 'C', 'D', 'E']))).toBe('No conversations were imported; 5 were already here: “A”, “Untitled chat”, “C” and 2 more.')
    expect(importSummary(result(0, []))).toBe('The file holds no conversations.')
  })
})
