// ResourceDistribution validating webhook (upstream pkg/webhook/resourcedistribution/validating):
// a named Secret or ConfigMap, fixed identity, unambiguous valid target namespaces.
import type { ResourceDistribution, ResourceDistributionV1alpha1 } from '../../apis/apps/resourcedistribution.ts';
import { type FieldError, invalid } from '../../apis/field-errors.ts';
import { validateObjectMeta } from '../podtemplate.ts';
import { isDNS1123Label } from '../../util/labelselector.ts';
import { type LabelSelectorLike, labelSelectorAsSelector } from '../../util/labelselector.ts';
import { AdmissionDenied, type AdmissionContext } from '../../runtime/webhook/types.ts';

type AnyRD = ResourceDistribution | ResourceDistributionV1alpha1;

const internal = (field: string, detail: string): FieldError => ({ type: 'InternalError', field, detail });

interface RawResource {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
}

const SUPPORTED = new Set(['v1/Secret', 'v1/ConfigMap']);

/**
 * Upstream checks the resource by a dry-run create in its own namespace (so a namespace written in
 * the resource is ignored); without a name that create fails as below, the one failure a Secret or
 * ConfigMap template can hit before its data is looked at.
 */
function validateResource(res: RawResource, oldRes: RawResource | undefined): FieldError[] {
  const path = 'spec.resource';
  if (!SUPPORTED.has(`${res.apiVersion ?? ''}/${res.kind ?? ''}`)) {
    return [invalid(path, res, 'unknown or unsupported resource GroupKind, only support [Secret ConfigMap]')];
  }
  if (oldRes && (res.apiVersion !== oldRes.apiVersion || res.kind !== oldRes.kind || res.metadata?.name !== oldRes.metadata?.name)) {
    return [invalid(path, null, 'resource apiVersion, kind, and name are immutable')];
  }
  if (!res.metadata?.name) {
    return [
      internal(
        path,
        `failed to dry-run to validate spec.resource, error: ${res.kind} "" is invalid: metadata.name: Required value: name or generateName is required`,
      ),
    ];
  }
  return [];
}

function validateTargets(obj: AnyRD): FieldError[] {
  const targets = obj.spec?.targets ?? {};
  const errs: FieldError[] = [];
  const included = new Set((targets.includedNamespaces?.list ?? []).map((ns) => ns.name ?? ''));
  const conflicted: string[] = [];
  for (const field of ['includedNamespaces', 'excludedNamespaces'] as const) {
    const group = targets[field];
    for (const ns of group?.list ?? []) {
      const name = ns.name ?? '';
      for (const detail of isDNS1123Label(name)) errs.push(invalid(`spec.targets.${field}`, group, detail));
      if (field === 'excludedNamespaces' && included.has(name)) conflicted.push(name);
    }
  }
  if (conflicted.length) {
    errs.push(
      invalid(
        'spec.targets',
        targets,
        `ambiguous targets because namespace [${conflicted.join(' ')}] is in both IncludedNamespaces.List and ExcludedNamespaces.List`,
      ),
    );
  }
  // v1alpha1 calls the selector namespaceLabelSelector.
  const bySelector = targets as { namespaceSelector?: LabelSelectorLike; namespaceLabelSelector?: LabelSelectorLike };
  const selectorField = bySelector.namespaceLabelSelector ? 'namespaceLabelSelector' : 'namespaceSelector';
  const selector = bySelector[selectorField];
  if (selector) {
    try {
      labelSelectorAsSelector(selector);
    } catch (e) {
      errs.push(invalid(`spec.targets.${selectorField}`, selector, `labelSelectorAsSelector error: ${(e as Error).message}`));
    }
  }
  return errs;
}

export function validateResourceDistribution(obj: AnyRD, old: AnyRD | undefined, ctx: AdmissionContext): FieldError[] {
  // Served whatever the gate, as upstream does: with the gate off no ResourceDistribution is admitted.
  if (!ctx.features.ResourceDistributionGate) throw new AdmissionDenied('feature-gate ResourceDistributionGate is not enabled', 403);
  const meta = validateObjectMeta(obj.metadata);
  const res = obj.spec?.resource as RawResource | undefined;
  if (!res || Object.keys(res).length === 0) return [...meta, invalid('spec', null, 'empty resource is not allowed')];
  return [...meta, ...validateResource(res, old?.spec?.resource as RawResource | undefined), ...validateTargets(obj)];
}
