/**
 * @file Types derived from the one contract (preload/api.ts): per channel, the method, its arguments as
 * they cross the wire (a stream method's trailing event callback stays behind), its result and its
 * streamed event. Handlers and validators are typed with these, so they cannot drift from `Api`.
 */
import { API_METHODS, type Api, type ApiChannel } from '../../preload/api'

/** The `Api` method behind a channel, e.g. 'chat:send' → Api['chat']['send']. */
export type ApiMethod<C extends ApiChannel> = C extends `${infer S extends keyof Api}:${infer M}`
  ? M extends keyof Api[S]
    ? Api[S][M]
    : never
  : never

type Params<C extends ApiChannel> = ApiMethod<C> extends (...args: infer P) => unknown ? P : never

/** A tuple without its last element. */
type DropLast<T extends readonly unknown[]> = T extends readonly [...infer Head, unknown] ? Head : never

/** Arguments as they cross the wire: all parameters, minus the event callback of a stream method. */
export type ApiArgs<C extends ApiChannel> = (typeof API_METHODS)[C] extends 'stream' ? DropLast<Params<C>> : Params<C>

/** What the call resolves to. */
export type ApiResult<C extends ApiChannel> = ApiMethod<C> extends (...args: never[]) => Promise<infer R> ? R : never

/** The event a stream method streams (never for plain calls). */
export type ApiEvent<C extends ApiChannel> = (typeof API_METHODS)[C] extends 'stream'
  ? Params<C> extends readonly [...unknown[], (event: infer E) => void]
    ? E
    : never
  : never

/** Channels whose calls stream events. */
export type StreamChannel = { [C in ApiChannel]: (typeof API_METHODS)[C] extends 'stream' ? C : never }[ApiChannel]

/** What a handler gets besides its arguments. */
export interface CallContext<C extends ApiChannel> {
  /** sends one streamed event to the caller (a no-op for plain calls) */
  readonly emit: (event: ApiEvent<C>) => void
  /** aborted when the caller goes away (window closed, HTTP client disconnected) */
  readonly signal: AbortSignal
}

/** One handler per channel, taking validated arguments. */
export type ApiHandlers = {
  readonly [C in ApiChannel]: (args: ApiArgs<C>, context: CallContext<C>) => Promise<ApiResult<C>>
}

/** True when `name` is a channel of the contract. */
export function isApiChannel(name: string): name is ApiChannel {
  return Object.hasOwn(API_METHODS, name)
}

