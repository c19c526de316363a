// PersistentPodState validating webhook (upstream pkg/webhook/persistentpodstate/validating): a
// StatefulSet (or whitelisted) target, at least one topology, a fixed target and one PPS per workload.
import type { PersistentPodState, PersistentPodStateV1alpha1 } from '../../apis/apps/persistentpodstate.ts';
import { APPS_GROUP, PPS_CUSTOM_WORKLOAD_WHITELIST_KEY } from '../../apis/constants.ts';
import { type FieldError, forbidden, invalid } from '../../apis/field-errors.ts';
import { semanticEqual } from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';
import { type CustomWorkload, isWhitelisted } from '../../util/custom-workloads.ts';
import { customWorkloadWhitelist, groupOf } from '../workload.ts';

type AnyPPS = PersistentPodState | PersistentPodStateV1alpha1;

// Upstream's (master, v1beta1) words for both served versions: it converts v1alpha1 before validating.
export function validatePersistentPodStateSpec(obj: AnyPPS, whitelist: readonly CustomWorkload[] = []): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj.spec;
  const ref = spec?.targetRef ?? { apiVersion: '', kind: '', name: '' };
  if (!ref.apiVersion || !ref.kind || !ref.name) {
    errs.push(invalid('spec.targetRef', ref, 'empty targetRef is not valid for PersistentPodState.'));
  }
  const isStatefulSet = ref.kind === 'StatefulSet' && ['apps', APPS_GROUP].includes(groupOf(ref.apiVersion ?? ''));
  if (!isStatefulSet && !isWhitelisted(ref, whitelist)) {
    errs.push(invalid('spec.targetRef', ref, 'targetRef.Kind must be StatefulSet or in PPS_Watch_Custom_Workload_WhiteList'));
  }
  if (spec?.requiredPersistentTopology == null && (spec?.preferredPersistentTopology ?? []).length === 0) {
    errs.push(invalid('spec', spec ?? null, 'TopologyConstraint and TopologyPreference cannot be empty at the same time'));
  }
  return errs;
}

export function validatePersistentPodStateUpdate(obj: AnyPPS, old: AnyPPS): FieldError[] {
  if (!semanticEqual(obj.spec?.targetRef, old.spec?.targetRef)) return [forbidden('spec.targetRef', 'targetRef is immutable')];
  return [];
}

/** One PersistentPodState per workload. */
export function validatePersistentPodStateConflict(obj: AnyPPS, others: readonly AnyPPS[]): FieldError[] {
  const ref = obj.spec?.targetRef;
  if (!ref) return [];
  for (const other of others) {
    if (other.metadata?.name === obj.metadata?.name) continue;
    const o = other.spec?.targetRef;
    if (o && groupOf(o.apiVersion) === groupOf(ref.apiVersion) && o.kind === ref.kind && o.name === ref.name) {
      return [invalid('spec.targetRef', ref, `targetRef is in conflict with other PersistentPodState ${other.metadata?.name}`)];
    }
  }
  return [];
}

export async function validatePersistentPodState(obj: AnyPPS, old: AnyPPS | undefined, ctx: AdmissionContext): Promise<FieldError[]> {
  const whitelist = await customWorkloadWhitelist(ctx.reader, PPS_CUSTOM_WORKLOAD_WHITELIST_KEY);
  const errs = validatePersistentPodStateSpec(obj, whitelist);
  if (old) errs.push(...validatePersistentPodStateUpdate(obj, old));
  if (ctx.reader) {
    const others = await ctx.reader.list<AnyPPS>(`${APPS_GROUP}/v1beta1`, 'PersistentPodState', {
      namespace: obj.metadata?.namespace ?? ctx.namespace,
    });
    errs.push(...validatePersistentPodStateConflict(obj, others));
  }
  return errs;
}
