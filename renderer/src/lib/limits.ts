/** @file The Api limits as renderer values: the contract's own table, re-exported under the renderer's name. */
import { API_LIMITS } from '../../../preload/api'

/** Limits the UI enforces before calling the Api (the same ones both bridges validate). */
export const LIMITS = API_LIMITS
