// WorkloadSpread validating webhook (upstream pkg/webhook/workloadspread/validating): a supported
// (or whitelisted) target, one WorkloadSpread per workload, a fixed target, valid subsets and
// schedule strategy. v1alpha1 and v1beta1 differ only in the subset placement field names.
import type { WorkloadSpread, WorkloadSpreadV1alpha1 } from '../../apis/apps/workloadspread.ts';
import { APPS_GROUP, WS_CUSTOM_WORKLOAD_WHITELIST_KEY } from '../../apis/constants.ts';
import { type FieldError, invalid, required } from '../../apis/field-errors.ts';
import { getLenientValueFromIntOrPercent } from '../../util/intstr.ts';
import { labelSelectorAsSelector, SelectorError } from '../../util/labelselector.ts';
import { validateNodeSelectorTerm, validateTolerations } from '../podtemplate.ts';
import { type CustomWorkload, isWhitelisted } from '../../util/custom-workloads.ts';
import { customWorkloadWhitelist, groupOf } from '../workload.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

type AnyWorkloadSpread = WorkloadSpread | WorkloadSpreadV1alpha1;
type Subset = NonNullable<AnyWorkloadSpread['spec']>['subsets'][number] & {
  requiredNodeSelector?: unknown;
  requiredNodeSelectorTerm?: unknown;
  preferredNodeSelector?: unknown;
  preferredNodeSelectorTerms?: unknown;
};
type TargetRef = NonNullable<AnyWorkloadSpread['spec']>['targetRef'];

const MAX_SCHEDULED_FAILED_SECONDS = 300;
const INT32_MAX = 2147483647;

// Built-in targets: kind → accepted API groups.
const BUILTIN_TARGETS: Record<string, string[]> = {
  CloneSet: [APPS_GROUP],
  Deployment: ['apps'],
  ReplicaSet: ['apps'],
  Job: ['batch'],
  StatefulSet: ['apps', APPS_GROUP],
};

function validateTargetRef(ref: TargetRef | undefined, whitelist: readonly CustomWorkload[]): FieldError[] {
  if (!ref) return [required('spec.targetRef', 'no targetRef defined in WorkloadSpread')];
  if (!ref.apiVersion || !ref.name || !ref.kind) {
    return [invalid('spec.targetRef', ref, 'empty TargetReference is not valid for WorkloadSpread.')];
  }
  const groups = BUILTIN_TARGETS[ref.kind];
  if (groups) {
    return ref.apiVersion.split('/').length <= 2 && groups.includes(groupOf(ref.apiVersion))
      ? []
      : [invalid('spec.targetRef', ref, `TargetReference is not valid for ${ref.kind}.`)];
  }
  return isWhitelisted(ref, whitelist) ? [] : [invalid('spec.targetRef', ref, "TargetReference's GroupKind is not permitted.")];
}

function maxReplicasType(v: number | string): 'int' | 'percent' {
  return typeof v === 'number' ? 'int' : 'percent';
}

function validateSubsets(ws: AnyWorkloadSpread): FieldError[] {
  const subsets = (ws.spec?.subsets ?? []) as Subset[];
  const path = 'spec.subsets';
  if (subsets.length === 0) return [required(path, 'subsets number must >= 1 in WorkloadSpread')];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  let sum = 0;
  let firstType: 'int' | 'percent' | undefined;
  for (const [i, subset] of subsets.entries()) {
    const sp = `${path}[${i}]`;
    if (!subset.name) errs.push(invalid(`${sp}.name`, subset.name ?? '', ''));
    else {
      if (names.has(subset.name)) errs.push(invalid(`${sp}.name`, subset.name, `duplicated subset name ${subset.name}`));
      names.add(subset.name);
    }
    const [requiredField, preferredField] =
      'requiredNodeSelectorTerm' in subset || 'preferredNodeSelectorTerms' in subset
        ? (['requiredNodeSelectorTerm', 'preferredNodeSelectorTerms'] as const)
        : (['requiredNodeSelector', 'preferredNodeSelector'] as const);
    const requiredTerm = subset[requiredField] as Parameters<typeof validateNodeSelectorTerm>[0];
    if (requiredTerm) errs.push(...validateNodeSelectorTerm(requiredTerm, `${sp}.${requiredField}`));
    const preferred = (subset[preferredField] ?? []) as Array<{
      weight: number;
      preference: Parameters<typeof validateNodeSelectorTerm>[0];
    }>;
    preferred.forEach((term, j) => {
      const tp = `${sp}.preferredSchedulingTerms[${j}]`;
      if (term.weight < 1 || term.weight > 100) errs.push(invalid(`${tp}.weight`, term.weight, 'must be in the range 1-100'));
      errs.push(...validateNodeSelectorTerm(term.preference, `${tp}.preference`));
    });
    if (subset.tolerations) errs.push(...validateTolerations(subset.tolerations, `${sp}.tolerations`));

    const max = subset.maxReplicas;
    if (max === undefined || max === null) continue;
    const type = maxReplicasType(max);
    if (firstType === undefined) firstType = type;
    else if (type !== firstType) {
      errs.push(invalid(`${sp}.maxReplicas`, max, 'the maxReplicas type of all subsets must be the same'));
      return errs;
    }
    if (ws.spec?.targetRef?.kind === 'StatefulSet' && type !== 'int') {
      errs.push(invalid(`${sp}.maxReplicas`, max, 'the maxReplicas type must be Int for StatefulSet'));
      return errs;
    }
    let value: number;
    try {
      value = getLenientValueFromIntOrPercent(max, 100, true);
    } catch {
      value = -1;
    }
    if (value < 0) {
      errs.push(invalid(`${sp}.maxReplicas`, max, 'maxReplicas is not valid for subset'));
      return errs;
    }
    if (type === 'percent') {
      sum += value;
      if (sum > 100) {
        errs.push(invalid(`${sp}.maxReplicas`, max, "the sum of all subset's maxReplicas exceeds 100% is no permitted"));
        return errs;
      }
    }
  }
  const last = subsets[subsets.length - 1]!;
  if (firstType === 'percent' && sum < 100 && last.maxReplicas != null) {
    errs.push(
      invalid(
        `${path}[0].maxReplicas`,
        subsets[0]!.maxReplicas,
        'maxReplicas sum of all subsets must equal 100% when type is specified as percent',
      ),
    );
  }
  return errs;
}

function validateScheduleStrategy(ws: AnyWorkloadSpread): FieldError[] {
  const strategy = ws.spec?.scheduleStrategy ?? {};
  const subsets = ws.spec?.subsets ?? [];
  const errs: FieldError[] = [];
  const type = strategy.type ?? '';
  if (type !== '' && type !== 'Fixed' && type !== 'Adaptive') {
    errs.push(invalid('spec.scheduleStrategy.type', type, "ScheduleStrategy's type is not valid"));
  }
  const adaptive = strategy.adaptive;
  if (adaptive) {
    const seconds = adaptive.rescheduleCriticalSeconds ?? null;
    if (type !== 'Adaptive') {
      errs.push(
        invalid('spec.scheduleStrategy.type', seconds, "the scheduleStrategy's type must be adaptive when using adaptive scheduleStrategy"),
      );
    }
    if (subsets.length > 1 && subsets[subsets.length - 1]!.maxReplicas != null) {
      errs.push(
        invalid('spec.scheduleStrategy.adaptive', seconds, 'the last subset must be not specified when using adaptive scheduleStrategy'),
      );
    }
    const allowedMax = subsets.length > 1 ? Math.trunc((MAX_SCHEDULED_FAILED_SECONDS - 5) / (subsets.length - 1)) : INT32_MAX;
    if (seconds !== null && (seconds < 0 || seconds > allowedMax)) {
      errs.push(
        invalid(
          'spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds',
          seconds,
          `rescheduleCriticalSeconds < 0 or rescheduleCriticalSeconds > ${allowedMax} is not permitted`,
        ),
      );
    }
  }
  return errs;
}

/** targetFilter.selector must be a valid label selector (an `In` with no values is not). */
function validateTargetFilter(ws: AnyWorkloadSpread): FieldError[] {
  const filter = ws.spec?.targetFilter;
  if (!filter) return [];
  try {
    labelSelectorAsSelector(filter.selector);
    return [];
  } catch (err) {
    if (!(err instanceof SelectorError)) throw err;
    return [invalid('spec.targetFilter', filter, err.message)];
  }
}

/** Rules on one object; the whitelist admits custom target kinds. */
export function validateWorkloadSpreadSpec(ws: AnyWorkloadSpread, whitelist: readonly CustomWorkload[] = []): FieldError[] {
  return [
    ...validateTargetRef(ws.spec?.targetRef, whitelist),
    ...validateSubsets(ws),
    ...validateScheduleStrategy(ws),
    ...validateTargetFilter(ws),
  ];
}

/** One WorkloadSpread per workload (first conflict only). */
export function validateWorkloadSpreadConflict(ws: AnyWorkloadSpread, others: readonly AnyWorkloadSpread[]): FieldError[] {
  const ref = ws.spec?.targetRef;
  if (!ref) return [];
  for (const other of others) {
    if (other.metadata?.name === ws.metadata?.name) continue;
    const o = other.spec?.targetRef;
    if (o && groupOf(o.apiVersion) === groupOf(ref.apiVersion) && o.kind === ref.kind && o.name === ref.name) {
      return [invalid('spec.targetRef', ref, `ws.spec.targetRef is in conflict with other WorkloadSpread ${other.metadata?.name}`)];
    }
  }
  return [];
}

/** UPDATE: the target (group, kind, name) cannot change. */
export function validateWorkloadSpreadUpdate(ws: AnyWorkloadSpread, old: AnyWorkloadSpread): FieldError[] {
  const ref = ws.spec?.targetRef;
  const oldRef = old.spec?.targetRef;
  if (ref && oldRef && (groupOf(ref.apiVersion) !== groupOf(oldRef.apiVersion) || ref.kind !== oldRef.kind || ref.name !== oldRef.name)) {
    return [invalid('spec.targetRef', ref, 'change TargetReference is not permitted for WorkloadSpread')];
  }
  return [];
}

export async function validateWorkloadSpread(
  ws: AnyWorkloadSpread,
  old: AnyWorkloadSpread | undefined,
  ctx: AdmissionContext,
): Promise<FieldError[]> {
  const whitelist = await customWorkloadWhitelist(ctx.reader, WS_CUSTOM_WORKLOAD_WHITELIST_KEY);
  const errs = validateWorkloadSpreadSpec(ws, whitelist);
  if (ctx.reader) {
    const others = await ctx.reader.list<AnyWorkloadSpread>(`${APPS_GROUP}/v1beta1`, 'WorkloadSpread', {
      namespace: ws.metadata?.namespace ?? ctx.namespace,
    });
    errs.push(...validateWorkloadSpreadConflict(ws, others));
  }
  if (old) errs.push(...validateWorkloadSpreadUpdate(ws, old));
  return errs;
}
