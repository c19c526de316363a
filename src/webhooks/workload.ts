// Rules shared by the workload webhooks (CloneSet, Advanced StatefulSet, UnitedDeployment,
// BroadcastJob, AdvancedCronJob) and by those whose target is a workload (WorkloadSpread,
// PersistentPodState): update strategies, selectors, deletion protection, job names, and the
// custom-workload whitelists of kruise-configuration.
import fjp from 'fast-json-patch';
import type { UpdatePriorityStrategy, UpdateScatterStrategy } from '../apis/apps/pub.ts';
import {
  DEFAULT_KRUISE_NAMESPACE,
  DELETION_PROTECTION_LABEL,
  DeletionProtection,
  ENV_POD_NAMESPACE,
  KRUISE_CONFIGURATION_NAME,
} from '../apis/constants.ts';
import type { LabelSelector, PodTemplateSpec } from '../apis/core.ts';
import type { FeatureGates } from '../apis/features.ts';
import { type FieldError, invalid, required } from '../apis/field-errors.ts';
import { parseCustomWorkloadWhitelist, type CustomWorkload } from '../util/custom-workloads.ts';
import { labelSelectorAsSelector, validateLabelSelector } from '../util/labelselector.ts';
import { AdmissionDenied, type AdmissionReader } from '../runtime/webhook/types.ts';
import { regexError } from '../util/labelselector.ts';

/** UpdatePriorityStrategy.FieldsValidation: the first problem, or undefined. */
export function priorityStrategyProblem(s: UpdatePriorityStrategy | undefined): string | undefined {
  if (!s) return undefined;
  if ((s.weightPriority?.length ?? 0) > 0 && (s.orderPriority?.length ?? 0) > 0) {
    return 'only one of weightPriority and orderPriority can be used';
  }
  for (const w of s.weightPriority ?? []) {
    if (w.weight < 0 || w.weight > 100) return 'weight must be valid number in the range 1-100';
    const sel = w.matchSelector ?? {};
    if (Object.keys(sel.matchLabels ?? {}).length + (sel.matchExpressions?.length ?? 0) === 0) return 'selector can not be empty';
    try {
      labelSelectorAsSelector(sel);
    } catch (e) {
      return `invalid selector ${(e as Error).message}`;
    }
  }
  for (const o of s.orderPriority ?? []) if (!o.orderedKey) return 'order key can not be empty';
  return undefined;
}

/** UpdateScatterStrategy.FieldsValidation. */
export function scatterStrategyProblem(s: UpdateScatterStrategy | undefined): string | undefined {
  const seen = new Set<string>();
  for (const term of s ?? []) {
    if (!term.key) return 'key should not be empty';
    const id = `${term.key}:${term.value}`;
    if (seen.has(id)) return `duplicated key=${term.key} value=${term.value}`;
    seen.add(id);
  }
  return undefined;
}

/**
 * Selector checks shared by the workloads: required, valid, non-empty ("empty selector is invalid
 * for <kind>"). Returns the parsed selector when usable.
 */
export function validateWorkloadSelector(
  selector: LabelSelector | undefined,
  path: string,
  kind: string,
): { errs: FieldError[]; ok: boolean } {
  if (!selector) return { errs: [required(path)], ok: false };
  const errs = validateLabelSelector(selector, path);
  if (Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions?.length ?? 0) === 0) {
    errs.push(invalid(path, selector, `empty selector is invalid for ${kind}`));
  }
  try {
    labelSelectorAsSelector(selector);
    return { errs, ok: true };
  } catch {
    errs.push(invalid(path, selector, ''));
    return { errs, ok: false };
  }
}

/** "`selector` does not match template `labels`" unless the selector is empty. */
export function validateSelectorMatchesTemplate(
  selector: LabelSelector | undefined,
  labels: Record<string, string> | undefined,
  path: string,
): FieldError[] {
  const sel = labelSelectorAsSelector(selector);
  if (sel.isEverything() || sel.matches(labels ?? {})) return [];
  return [invalid(path, labels ?? null, '`selector` does not match template `labels`')];
}

const IN_PLACE_IMAGE_PATH = /\/containers\/([0-9]+)\/image/;

/** The first template.spec change other than a container image, as "<op> <path>"; undefined if none. */
export function nonImageTemplateChange(
  oldTemplate: PodTemplateSpec | undefined,
  newTemplate: PodTemplateSpec | undefined,
): string | undefined {
  const ops = fjp.compare(structuredClone(oldTemplate?.spec ?? {}), structuredClone(newTemplate?.spec ?? {}));
  const bad = ops.find((op) => op.op !== 'replace' || !IN_PLACE_IMAGE_PATH.test(op.path));
  return bad ? `${bad.op} ${bad.path}` : undefined;
}

/**
 * Deletion protection for workloads (label policy.kruise.io/delete-protection, gate
 * ResourcesDeletionProtection): Always rejects, Cascading rejects while replicas > 0. Throws a 403.
 */
export function checkWorkloadDeletion(
  obj: { metadata?: { labels?: Record<string, string>; deletionTimestamp?: string } } | undefined,
  replicas: number | undefined,
  features: FeatureGates,
): void {
  if (!features.ResourcesDeletionProtection || !obj || obj.metadata?.deletionTimestamp) return;
  const value = obj.metadata?.labels?.[DELETION_PROTECTION_LABEL];
  if (value === DeletionProtection.Always) {
    throw new AdmissionDenied(`forbidden by ResourcesProtectionDeletion for ${DELETION_PROTECTION_LABEL}=${value}`, 403);
  }
  if (value === DeletionProtection.Cascading && (replicas ?? 1) > 0) {
    throw new AdmissionDenied(
      `forbidden by ResourcesProtectionDeletion for ${DELETION_PROTECTION_LABEL}=${value} and replicas ${replicas ?? 1}>0`,
      403,
    );
  }
}

const JOB_NAME_RE = /^[a-zA-Z0-9-]+$/;

/** Name rule shared by BroadcastJob and AdvancedCronJob: alphanumerics and '-', ≤ 63 characters. */
export function jobNameValidator(kind: string): (name: string) => string[] {
  return (name) => {
    const errs: string[] = [];
    if (!JOB_NAME_RE.test(name))
      errs.push(regexError(`${kind} name must consist of alphanumeric characters or '-'`, '^[a-zA-Z0-9\\-]+$', 'example-com'));
    if (name.length > 63) errs.push('must be no more than 63 characters');
    return errs;
  };
}

/** The API group of an apiVersion ("apps/v1" → "apps", "v1" → ""). */
export function groupOf(apiVersion: string | undefined): string {
  const parts = (apiVersion ?? '').split('/');
  return parts.length === 2 ? parts[0]! : '';
}

/** A whitelist of kruise-configuration (none without a reader); malformed JSON fails the request, as upstream. */
export async function customWorkloadWhitelist(reader: AdmissionReader | undefined, key: string): Promise<CustomWorkload[]> {
  if (!reader) return [];
  const ns = process.env[ENV_POD_NAMESPACE] || DEFAULT_KRUISE_NAMESPACE;
  const cm = await reader.get<{ data?: Record<string, string> }>('v1', 'ConfigMap', KRUISE_CONFIGURATION_NAME, ns);
  return parseCustomWorkloadWhitelist(cm?.data?.[key]);
}
