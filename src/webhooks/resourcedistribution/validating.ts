// ResourceDistribution validating webhook (upstream pkg/webhook/resourcedistribution/validating):
// a Secret or ConfigMap without namespace, fixed identity, unambiguous valid target namespaces.
import type { ResourceDistribution, ResourceDistributionV1alpha1 } from '../../apis/apps/resourcedistribution.ts';
import { type FieldError, forbidden, invalid, required } from '../../apis/field-errors.ts';
import { isDNS1123Label } from '../podtemplate.ts';
import { type LabelSelectorLike, labelSelectorAsSelector, validateLabelSelector } from '../../util/labelselector.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

type AnyRD = ResourceDistribution | ResourceDistributionV1alpha1;

interface RawResource {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
}

const SUPPORTED = new Set(['v1/Secret', 'v1/ConfigMap']);

function validateResource(res: RawResource | undefined): FieldError[] {
  const path = 'spec.resource';
  if (!res || Object.keys(res).length === 0) return [required(path, 'empty resource is not allowed')];
  const errs: FieldError[] = [];
  if (!SUPPORTED.has(`${res.apiVersion ?? ''}/${res.kind ?? ''}`)) {
    errs.push(invalid(path, `${res.apiVersion ?? ''}/${res.kind ?? ''}`, 'unknown or unsupported resource GroupKind, only Secret and ConfigMap are supported'));
  }
  if (!res.metadata?.name) errs.push(required(`${path}.metadata.name`, 'name of resource cannot be empty'));
  if (res.metadata?.namespace) errs.push(forbidden(`${path}.metadata.namespace`, 'namespace of resource should not be set'));
  return errs;
}

function validateTargets(obj: AnyRD): FieldError[] {
  const targets = obj.spec?.targets ?? {};
  const errs: FieldError[] = [];
  const included = new Set<string>();
  for (const [field, list] of [
    ['includedNamespaces', targets.includedNamespaces?.list ?? []],
    ['excludedNamespaces', targets.excludedNamespaces?.list ?? []],
  ] as const) {
    list.forEach((ns, i) => {
      const name = ns.name ?? '';
      for (const detail of isDNS1123Label(name)) errs.push(invalid(`spec.targets.${field}.list[${i}].name`, name, detail));
      if (field === 'includedNamespaces') included.add(name);
      else if (included.has(name)) {
        errs.push(invalid('spec.targets', name, `ambiguous targets because namespace ${name} is in both IncludedNamespaces.List and ExcludedNamespaces.List`));
      }
    });
  }
  // v1alpha1 calls the selector namespaceLabelSelector.
  const bySelector = targets as { namespaceSelector?: LabelSelectorLike; namespaceLabelSelector?: LabelSelectorLike };
  const selectorField = bySelector.namespaceLabelSelector ? 'namespaceLabelSelector' : 'namespaceSelector';
  const selector = bySelector[selectorField];
  if (selector) {
    errs.push(...validateLabelSelector(selector, `spec.targets.${selectorField}`));
    try {
      labelSelectorAsSelector(selector);
    } catch (e) {
      errs.push(invalid(`spec.targets.${selectorField}`, selector, (e as Error).message));
    }
  }
  return errs;
}

export function validateResourceDistributionUpdate(obj: AnyRD, old: AnyRD): FieldError[] {
  const res = (obj.spec?.resource ?? {}) as RawResource;
  const oldRes = (old.spec?.resource ?? {}) as RawResource;
  const errs: FieldError[] = [];
  if (res.apiVersion !== oldRes.apiVersion) errs.push(invalid('spec.resource.apiVersion', res.apiVersion, 'apiVersion of resource is immutable'));
  if (res.kind !== oldRes.kind) errs.push(invalid('spec.resource.kind', res.kind, 'kind of resource is immutable'));
  if (res.metadata?.name !== oldRes.metadata?.name) errs.push(invalid('spec.resource.metadata.name', res.metadata?.name, 'name of resource is immutable'));
  return errs;
}

export function validateResourceDistribution(obj: AnyRD, old: AnyRD | undefined, _ctx: AdmissionContext): FieldError[] {
  const errs = [...validateResource(obj.spec?.resource as RawResource | undefined), ...validateTargets(obj)];
  if (old) errs.push(...validateResourceDistributionUpdate(obj, old));
  return errs;
}
