/** @file Other OpenAI-compatible servers as backends: URL checks, their model lists, streamed completions, the servers the user added. */
export {
  checkServerUrl,
  DEFAULT_STALL_MS,
  listRemoteModels,
  MAX_REMOTE_LINE_CHARS,
  RemoteError,
  streamRemoteChat,
  streamRemoteText,
  type RemoteChatRequest,
  type RemoteChatResult,
  type RemoteModelInfo,
  type RemoteOptions,
  type RemoteServer,
  type RemoteTextRequest
} from './openai-remote'
export { RemoteServersService, type KeySealer, type RemoteServersOptions, type RemoteTarget } from './servers'
