// TEMPORARY seam until main/engine/model/index.ts lands; then imports go to '../model' and this file is deleted.
export * from '../model/types'
export { f16ToF32, tensorToFloat32, dequantizeRows } from '../model/tensor'
export { ropeInvFreq, ropePair } from '../model/rope'
