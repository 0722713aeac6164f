/** @file What the device tests use, from the layers' public index files. */
export * from '../../main/engine/devices'
export { GraphBuilder } from '../../main/engine/graph'
