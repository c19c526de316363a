// EphemeralJob validating webhook (upstream pkg/webhook/ephemeraljob/validating): a selector,
// non-negative counters, and ephemeral containers as Kubernetes accepts them (no ports, probes,
// lifecycle or resources; no subPath mounts).
import type { EphemeralJob } from '../../apis/apps/ephemeraljob.ts';
import type { EphemeralContainer } from '../../apis/core.ts';
import { type FieldError, forbidden, invalid, notSupported, required } from '../../apis/field-errors.ts';
import { labelSelectorAsSelector, validateLabelSelector } from '../../util/labelselector.ts';
import { validateContainerNameAndImage, validateNonnegative } from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
const FORBIDDEN_FIELDS = ['ports', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'resources'] as const;

function validateEphemeralContainer(c: EphemeralContainer, path: string, names: Set<string>): FieldError[] {
  const errs: FieldError[] = validateContainerNameAndImage(c, path, names);
  // Nothing defaults an EphemeralJob's containers (upstream has no mutating webhook for it): both
  // policies must be written out.
  if (!c.terminationMessagePolicy) errs.push(required(`${path}.terminationMessagePolicy`));
  else if (!TERMINATION_MESSAGE_POLICIES.includes(c.terminationMessagePolicy)) {
    errs.push(notSupported(`${path}.terminationMessagePolicy`, c.terminationMessagePolicy, TERMINATION_MESSAGE_POLICIES));
  }
  if (!c.imagePullPolicy) errs.push(required(`${path}.imagePullPolicy`));
  else if (!PULL_POLICIES.includes(c.imagePullPolicy)) errs.push(notSupported(`${path}.imagePullPolicy`, c.imagePullPolicy, PULL_POLICIES));
  for (const field of FORBIDDEN_FIELDS) {
    const v = c[field] as unknown;
    const set = Array.isArray(v) ? v.length > 0 : v && typeof v === 'object' ? Object.keys(v).length > 0 : false;
    if (set) errs.push(forbidden(`${path}.${field}`, 'cannot be set for an Ephemeral Container'));
  }
  (c.volumeMounts ?? []).forEach((m, i) => {
    if (m.subPath) errs.push(forbidden(`${path}.volumeMounts[${i}].subPath`, 'cannot be set for an Ephemeral Container'));
    if (m.subPathExpr) errs.push(forbidden(`${path}.volumeMounts[${i}].subPathExpr`, 'cannot be set for an Ephemeral Container'));
  });
  return errs;
}

export function validateEphemeralJob(obj: EphemeralJob, _old: EphemeralJob | undefined, _ctx: AdmissionContext): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj.spec;
  if (!spec?.selector) errs.push(required('spec.selector', 'no selector defined for EphemeralJob'));
  else {
    errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
    try {
      labelSelectorAsSelector(spec.selector);
    } catch (e) {
      errs.push(invalid('spec.selector', spec.selector, (e as Error).message));
    }
  }
  errs.push(...validateNonnegative(spec?.replicas, 'spec.replicas'));
  errs.push(...validateNonnegative(spec?.parallelism, 'spec.parallelism'));
  errs.push(...validateNonnegative(spec?.activeDeadlineSeconds, 'spec.activeDeadlineSeconds'));
  errs.push(...validateNonnegative(spec?.ttlSecondsAfterFinished, 'spec.ttlSecondsAfterFinished'));
  const containers = spec?.template?.ephemeralContainers ?? [];
  if (containers.length === 0) errs.push(required('spec.template.ephemeralContainers'));
  const names = new Set<string>();
  // Upstream names container fields from ephemeralContainers (not spec.template.ephemeralContainers).
  containers.forEach((c, i) => errs.push(...validateEphemeralContainer(c, `ephemeralContainers[${i}]`, names)));
  return errs;
}
