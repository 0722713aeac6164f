/** @file Published greedy outputs from ../shared/models/README.md (ground truth, not our own output). */

/** stories260K, fp32, temperature 0, first 64 ids after BOS. */
export const PUBLISHED_STORIES260K_IDS = `403 407 261 378 432 383 286 261 376 298 315 421 395 317 426 338 401 396 267 337 410 408 419 292
411 322 265 282 295 433 426 385 328 432 358 394 261 370 432 352 266 268 388 426 338 391 266 267 337 335 312 432 398 312 286
267 414 270 333 415 426 13 438 310`
  .split(/\s+/)
  .map(Number)

/** stories260K published text (run.c, 256 steps); the first sentences are what tests compare. */
export const PUBLISHED_STORIES260K_TEXT_START =
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.'

/** TinyStories-656K, fp32, greedy from id 1: first generated ids. */
export const PUBLISHED_TINYSTORIES_IDS = `147 201 282 215 286 598 1662 356 499 826 1363 1145 1652 615 242 1482 951 628 499 826 872 921 318 385
628 499 826 617 242 198`
  .split(/\s+/)
  .map(Number)

/** TinyStories-656K published text start. */
export const PUBLISHED_TINYSTORIES_TEXT_START =
  'Once upon a time, there was a little girl named Lily. She had a toy car that she loved very much.'

/** TinyStories-656K stops on id 2 after this many tokens (the <|end_story|> marker is spelled out first). */
export const PUBLISHED_TINYSTORIES_LENGTH = 138
