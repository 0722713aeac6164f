/** @file Documents for summaries: reading, extracting, cleaning and splitting text, the map-reduce summary, passages. */
export { checkDocumentSize, DOCUMENT_EXTENSIONS, DOCUMENT_TYPES, documentTypeOf, extractDocument, htmlVisibleText, MAX_DOCUMENT_BYTES, type DocumentType, type ExtractedDocument } from './extract'
export { DocumentError } from './errors'
export { joinPages, normalizeWhitespace } from './clean'
export { readDocumentFile, type DocumentFile } from './read-file'
export { MAX_PARTS, splitByTokens, type TokenCounter } from './split'
export { pickPassages, wordsOf, type Passage } from './passages'
export { combineStats, MAX_REDUCE_LEVELS, summarize, summaryBudget, summaryMessages, textSummaryModel, type SummarizeOptions, type SummaryModel, type SummaryProgress, type SummaryResult, type TextSummaryOptions } from './summarize'
