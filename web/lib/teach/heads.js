// Whether h heads can split d_model evenly (d_k = d_v = d_model / h), as the
// HeadLab module decides it: parameterCount refuses a numHeads that does not
// divide dModel (and gives no dK/dV) with a RangeError. The elements ask this
// instead of writing the rule again.

/**
 * @param {{parameterCount: Function}} lab  a Headlab instance (web/lib/headlab.js)
 * @returns {boolean}
 */
export function headsDivide(lab, numHeads, dModel) {
  try {
    lab.parameterCount({ dModel, numHeads });
    return true;
  } catch (e) {
    if (e instanceof RangeError) return false;
    throw e;
  }
}
