/** @file Other OpenAI-compatible servers as backends: URL checks, their model list, streamed chat. */
export { checkServerUrl, DEFAULT_STALL_MS, listRemoteModels, MAX_REMOTE_LINE_CHARS, RemoteError, streamRemoteChat, type RemoteChatRequest, type RemoteChatResult, type RemoteOptions, type RemoteServer } from './openai-remote'
