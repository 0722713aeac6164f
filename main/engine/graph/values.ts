/** @file The logical value names op groups read and write (graph I/O names of every segment). */

/** Logical value names; the whole-model graph's I/O uses exactly these names. */
export const VALUE = {
  hidden: 'hidden',
  positions: 'positions',
  logits: 'logits',
  finalIn: 'final_in',
  pastK: (l: number) => `past_k_${l}`,
  pastV: (l: number) => `past_v_${l}`,
  newK: (l: number) => `new_k_${l}`,
  newV: (l: number) => `new_v_${l}`,
  layerIn: (l: number) => (l === 0 ? 'hidden' : `resid_${l - 1}`),
  attnIn: (l: number) => `attn_in_${l}`,
  q: (l: number) => `q_${l}`,
  k: (l: number) => `k_${l}`,
  qRot: (l: number) => `q_rot_${l}`,
  attn: (l: number) => `attn_${l}`,
  residAttn: (l: number) => `resid_attn_${l}`,
  ffnIn: (l: number) => `ffn_in_${l}`,
  /** the shadow's corrections of a W8A8 layer's gate and up projections, side by side [1, S, 2·hidden] */
  ffnCorr: (l: number) => `ffn_corr_${l}`,
  /** SwiGLU's output, the down projection's input [1, S, hidden]: what the shadow of w_down reads */
  ffnHidden: (l: number) => `ffn_h_${l}`,
  layerOut: (l: number) => `resid_${l}`
} as const
