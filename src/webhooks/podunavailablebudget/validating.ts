// PodUnavailableBudget validating webhook (upstream pkg/webhook/podunavailablebudget/validating):
// exactly one of selector/targetRef and of maxUnavailable/minAvailable, deprecated annotations,
// immutability of what the budget selects, and no two budgets protecting the same pods.
import type { PodUnavailableBudget } from '../../apis/policy/podunavailablebudget.ts';
import { PUB_PROTECT_OPERATIONS_ANNOTATION, PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION, POLICY_GROUP } from '../../apis/constants.ts';
import { type FieldError, invalid, required } from '../../apis/field-errors.ts';
import { labelSelectorAsSelector, validateLabelSelector } from '../../util/labelselector.ts';
import { selectorsOverlap } from '../../util/selector-overlap.ts';
import { groupOf } from '../workload.ts';
import { AdmissionDenied } from '../../runtime/webhook/types.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';
import { isNotMoreThan100Percent, validatePositiveIntOrPercent } from '../podtemplate.ts';

type PUB = PodUnavailableBudget;

const PROTECT_OPERATIONS = ['DELETE', 'UPDATE', 'EVICT', 'RESIZE'];
const INT32_RE = /^[+-]?\d+$/;

const internal = (field: string, detail: string): FieldError => ({ type: 'InternalError', field, detail });

/** schema.ParseGroupVersion's error text, or undefined when the apiVersion parses. */
export function parseGroupVersionError(apiVersion: string): string | undefined {
  if (apiVersion === '' || apiVersion === '/') return undefined;
  const parts = apiVersion.split('/');
  if (parts.length > 2) return `unexpected GroupVersion string: ${apiVersion}`;
  return undefined;
}

function parseInt32(s: string): number | undefined {
  if (!INT32_RE.test(s)) return undefined;
  const n = Number(s);
  return n < -2147483648 || n > 2147483647 ? undefined : n;
}

/** Annotation and spec rules that need no other object. */
export function validatePodUnavailableBudgetSpec(obj: PUB): FieldError[] {
  const errs: FieldError[] = [];
  const annotations = obj.metadata?.annotations ?? {};
  const ops = annotations[PUB_PROTECT_OPERATIONS_ANNOTATION];
  if (ops !== undefined) {
    for (const op of ops.split(',')) {
      if (!PROTECT_OPERATIONS.includes(op)) {
        errs.push(internal('metadata', `annotation[${PUB_PROTECT_OPERATIONS_ANNOTATION}] is invalid`));
      }
    }
  }
  const total = annotations[PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION];
  if (total !== undefined) {
    const n = parseInt32(total);
    if (n === undefined) errs.push(internal('metadata', `annotation[${PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION}] is invalid`));
  }

  const spec = obj.spec ?? ({} as NonNullable<PUB['spec']>);
  const { selector, targetRef } = spec;
  if (!selector && !targetRef) {
    errs.push(required('spec.selector, targetRef', 'no selector or targetRef defined in PodUnavailableBudget'));
  } else if (selector && targetRef) {
    errs.push(required('spec.selector, targetRef', 'selector and targetRef are mutually exclusive'));
  } else if (targetRef) {
    if (!targetRef.apiVersion || !targetRef.name || !targetRef.kind) {
      errs.push(invalid('spec.TargetReference', targetRef, 'empty TargetReference is not valid for PodUnavailableBudget.'));
    }
    const gvErr = parseGroupVersionError(targetRef.apiVersion ?? '');
    if (gvErr) errs.push(invalid('spec.TargetReference', targetRef, gvErr));
  } else if (selector) {
    errs.push(...validateLabelSelector(selector, 'spec.selector'));
    if (Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions ?? []).length === 0) {
      errs.push(invalid('spec.selector', selector, 'empty selector is not valid for PodUnavailableBudget.'));
    }
    try {
      labelSelectorAsSelector(selector);
    } catch {
      errs.push(invalid('spec.selector', selector, ''));
    }
  }

  const { maxUnavailable, minAvailable } = spec;
  const has = (v: unknown) => v !== undefined && v !== null;
  if (!has(maxUnavailable) && !has(minAvailable)) {
    errs.push(required('spec.maxUnavailable, minAvailable', 'no maxUnavailable or minAvailable defined in PodUnavailableBudget'));
  } else if (has(maxUnavailable) && has(minAvailable)) {
    errs.push(required('spec.maxUnavailable, minAvailable', 'maxUnavailable and minAvailable are mutually exclusive'));
  } else {
    const [path, v] = has(maxUnavailable) ? ['spec.maxUnavailable', maxUnavailable!] : ['spec.minAvailable', minAvailable!];
    errs.push(...validatePositiveIntOrPercent(v, path), ...isNotMoreThan100Percent(v, path));
  }

  (spec.protectOperations ?? []).forEach((op, i) => {
    if (!PROTECT_OPERATIONS.includes(op)) {
      errs.push({
        type: 'FieldValueNotSupported',
        field: `spec.protectOperations[${i}]`,
        badValue: op,
        detail: `supported values: ${PROTECT_OPERATIONS.map((o) => JSON.stringify(o)).join(', ')}`,
      });
    }
  });
  if (spec.ignoredPodSelector) {
    const s = spec.ignoredPodSelector;
    errs.push(...validateLabelSelector(s, 'spec.ignoredPodSelector'));
    if (Object.keys(s.matchLabels ?? {}).length + (s.matchExpressions ?? []).length === 0) {
      errs.push(invalid('spec.ignoredPodSelector', s, 'empty ignoredPodSelector is not valid for PodUnavailableBudget'));
    }
  }
  if (total !== undefined && spec.protectTotalReplicas !== undefined && spec.protectTotalReplicas !== null) {
    const n = parseInt32(total);
    if (n !== undefined && n !== spec.protectTotalReplicas) {
      errs.push(
        invalid(
          `metadata.annotations[${PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION}]`,
          total,
          'must match spec.protectTotalReplicas when both are set',
        ),
      );
    }
  }
  return errs;
}

function sameJSON(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** UPDATE: what the budget selects cannot change. */
export function validatePodUnavailableBudgetUpdate(obj: PUB, old: PUB): FieldError[] {
  if (!sameJSON(obj.spec?.selector, old.spec?.selector) || !sameJSON(obj.spec?.targetRef, old.spec?.targetRef)) {
    return [required('spec.selector, targetRef', 'selector and targetRef cannot be modified')];
  }
  return [];
}

/** A budget may not protect pods another budget of the namespace protects (first conflict only). */
export function validatePodUnavailableBudgetConflict(obj: PUB, others: readonly PUB[]): FieldError[] {
  for (const other of others) {
    if (other.metadata?.name === obj.metadata?.name) continue;
    const ref = obj.spec?.targetRef;
    const otherRef = other.spec?.targetRef;
    if (ref && otherRef) {
      if (groupOf(ref.apiVersion) === groupOf(otherRef.apiVersion) && ref.kind === otherRef.kind && ref.name === otherRef.name) {
        return [
          invalid(
            'spec.targetReference',
            ref,
            `pub.spec.targetReference is in conflict with other PodUnavailableBudget ${other.metadata?.name}`,
          ),
        ];
      }
    } else if (obj.spec?.selector && other.spec?.selector) {
      if (selectorsOverlap(obj.spec.selector, other.spec.selector)) {
        return [
          invalid(
            'spec.selector',
            obj.spec.selector,
            `pub.spec.selector is in conflict with other PodUnavailableBudget ${other.metadata?.name}`,
          ),
        ];
      }
    }
  }
  return [];
}

export async function validatePodUnavailableBudget(obj: PUB, old: PUB | undefined, ctx: AdmissionContext): Promise<FieldError[]> {
  if (!ctx.features.PodUnavailableBudgetDeleteGate && !ctx.features.PodUnavailableBudgetUpdateGate) {
    throw new AdmissionDenied(
      'feature PodUnavailableBudget is invalid, please open via feature-gate(PodUnavailableBudgetDeleteGate, PodUnavailableBudgetUpdateGate)',
    );
  }
  const errs = validatePodUnavailableBudgetSpec(obj);
  if (old) errs.push(...validatePodUnavailableBudgetUpdate(obj, old));
  if (ctx.reader) {
    const namespace = obj.metadata?.namespace ?? ctx.namespace;
    try {
      const others = await ctx.reader.list<PUB>(`${POLICY_GROUP}/v1beta1`, 'PodUnavailableBudget', { namespace });
      errs.push(...validatePodUnavailableBudgetConflict(obj, others));
    } catch (e) {
      errs.push(internal('<nil>', `query other podUnavailableBudget failed, err: ${(e as Error).message}`));
    }
  }
  return errs;
}
