/**
 * @file The services' public face: what main/index.ts, main/server and the CLI use. Plain Node, no
 * Electron: the same services run behind IPC, behind HTTP, and in tests.
 */
export { createApp, type App, type AppOptions } from './app'
export { createApiHandlers, createDispatch, type ApiDispatch, type ApiServices, type DispatchContext, type DispatchOutcome } from './api-host'
export { isApiChannel, type ApiArgs, type ApiEvent, type ApiHandlers, type ApiMethod, type ApiResult, type CallContext, type StreamChannel } from './api-types'
export { API_VALIDATORS, base64Chars, type ApiValidators } from './api-validate'
export { ChatService, PERSIST_INTERVAL_MS, autoTitle, tokenDelay, type ChatServiceDeps, type CompletionJob, type CompletionOutcome } from './chat-service'
export { DataFolderInUseError, LOCK_FILE_NAME, acquireDataLock, type DataLock, type LockHolder } from './data-lock'
export { ConversationsService, DELETED_RETENTION_MS, toApiMessage } from './conversations-service'
export { AutoProfiles } from './auto-profiles'
export { DevicesService, type DevicesServiceDeps, type ModelPlacement, type PlacementForOptions } from './devices-service'
export { DEFAULT_PLACEMENT_SETTING, PRESET_NAMES, placementJson, placementSetting } from './placement-setting'
export { resolvePlacement, NOT_PROFILED, type AutoProfile, type PlacementModel, type PredictedSpeed, type Resolution } from './placement-resolve'
export { MAX_USAGE_SAMPLES, USAGE_IDLE_INTERVAL_MS, UsageSampler, type CoreTimes, type WorkerUsage, type UsageReading, type UsageSamplerOptions } from './usage-sampler'
export { ApiError, toApiError, type ApiErrorName } from './errors'
export { MAX_SCAN_DEPTH, MAX_SCAN_ENTRIES, isTokenizerFile, modelFileTotals, scanModelFolder, type FolderScan, type ModelCandidate } from './model-scan'
export { ModelsService, parameterCount, type ModelHeader } from './models-service'
export { defaultDataDir, defaultModelsDir, findSourceRoot, resolveAppPaths, type AppPaths, type AppPathsOptions } from './paths'
export { buildPrompt, longestTokenChars, type BuiltPrompt, type PromptModel } from './prompt'
export { DEFAULT_SAMPLING_SETTINGS, SettingsService } from './settings-service'
export { DocumentError, extractDocument, readDocumentFile, summarize, textSummaryModel, type SummaryProgress, type SummaryResult } from './documents'
