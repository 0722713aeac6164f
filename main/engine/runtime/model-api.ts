// TEMPORARY seam until main/engine/model/index.ts lands; then imports go to '../model' and this file is deleted.
export * from '../model/types'
export { dequantizeRows } from '../model/tensor'
