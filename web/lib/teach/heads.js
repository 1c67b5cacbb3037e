// Whether h heads can split d_model evenly (d_k = d_v = d_model / h), as the
// HeadLab module decides it (lab.checkShape answers null or the message
// createLayer would throw). The elements ask this instead of writing the rule again.

/**
 * @param {{checkShape: Function}} lab  a Headlab instance (web/lib/headlab.js)
 * @returns {boolean}
 */
export function headsDivide(lab, numHeads, dModel) {
  return lab.checkShape({ dModel, numHeads }) === null;
}
