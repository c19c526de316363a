// Kubernetes apps validation helpers for IntOrString fields (k8s.io/kubernetes/pkg/apis/apps/validation):
// the same wording as Deployment's maxUnavailable errors. Used by the PUB and SidecarSet validators.
import { type FieldError, invalid } from '../../apis/field-errors.ts';
import type { IntOrString } from '../../util/intstr.ts';

const PERCENT_FMT = '[0-9]+%';
const PERCENT_RE = new RegExp(`^${PERCENT_FMT}$`);
const PERCENT_ERR =
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/** ValidatePositiveIntOrPercent: ints ≥ 0, strings of the form "N%". */
export function validatePositiveIntOrPercent(v: IntOrString, path: string): FieldError[] {
  if (typeof v === 'string') return PERCENT_RE.test(v) ? [] : [invalid(path, v, PERCENT_ERR)];
  return v < 0 ? [invalid(path, v, 'must be greater than or equal to 0')] : [];
}

/** IsNotMoreThan100Percent: a valid percentage above 100% is rejected (ints are not checked). */
export function isNotMoreThan100Percent(v: IntOrString, path: string): FieldError[] {
  if (typeof v !== 'string' || !PERCENT_RE.test(v)) return [];
  return Number(v.slice(0, -1)) > 100 ? [invalid(path, v, 'must not be greater than 100%')] : [];
}
