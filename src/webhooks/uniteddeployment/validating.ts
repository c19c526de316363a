// UnitedDeployment validation (upstream pkg/webhook/uniteddeployment/validating).
import type { UnitedDeployment, UnitedDeploymentSpec } from '../../apis/apps/uniteddeployment.ts';
import type { PodTemplateSpec } from '../../apis/core.ts';
import { type FieldError, forbidden, invalid, notSupported, required } from '../../apis/field-errors.ts';
import type { IntOrString } from '../../util/intstr.ts';
import { isDNS1123Label, labelSelectorAsSelector, validateLabels } from '../../util/labelselector.ts';
import { checkWorkloadDeletion, validateSelectorMatchesTemplate, validateWorkloadSelector } from '../workload.ts';
import {
  defaultedTemplateCopy,
  semanticEqual,
  validateNodeSelectorTerm,
  validateNonnegative,
  validateObjectMeta,
  validatePodTemplateSpec,
  validateTolerations,
} from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

const SUBSETS = 'spec.topology.subsets';

/** ParseSubsetReplicas: an int ≥ 0, or an integer percent of the UnitedDeployment replicas (round half up). */
export function parseSubsetReplicas(udReplicas: number, v: IntOrString): number {
  if (typeof v === 'number') {
    if (v < 0) throw new Error(`subsetReplicas (${v}) should not be less than 0`);
    return v;
  }
  if (udReplicas < 0) throw new Error('subsetReplicas should be an integer when replicas of UnitedDeployment is nil');
  const m = /^(\d+)%$/.exec(v);
  if (!m) throw new Error(`subsetReplicas (${v}) should be an integer or a percentage`);
  const pct = Number(m[1]);
  if (pct > 100) throw new Error(`subsetReplicas (${v}) should be in range [0, 100]`);
  return Math.floor((udReplicas * pct) / 100 + 0.5);
}

function validateSubsetReplicas(spec: UnitedDeploymentSpec): FieldError[] {
  const subsets = spec.topology?.subsets ?? [];
  const expected = spec.replicas ?? -1;
  const errs: FieldError[] = [];
  let sum = 0;
  let sumMin = 0;
  let sumMax = 0;
  let countReplicas = 0;
  let countMax = 0;
  let hasReplicas = false;
  let hasCapacity = false;
  const parse = (v: IntOrString, path: string, bad: unknown): number => {
    try {
      return parseSubsetReplicas(expected, v);
    } catch (e) {
      errs.push(invalid(path, bad, (e as Error).message));
      return 0;
    }
  };
  subsets.forEach((s, i) => {
    const p = `${SUBSETS}[${i}]`;
    if (s.replicas != null) {
      countReplicas++;
      hasReplicas = true;
      sum += parse(s.replicas, `${p}.replicas`, s.replicas);
    }
    let min = 0;
    if (s.minReplicas != null) {
      hasCapacity = true;
      min = parse(s.minReplicas, `${p}.minReplicas`, s.maxReplicas ?? null);
    }
    sumMin += min;
    let max = 1000000;
    if (s.maxReplicas != null) {
      countMax++;
      hasCapacity = true;
      max = parse(s.maxReplicas, `${p}.minReplicas`, s.maxReplicas);
    }
    sumMax += max;
    if (min > max)
      errs.push(invalid(`${p}.minReplicas`, s.maxReplicas ?? null, `subset[${i}].minReplicas must be more than or equal to maxReplicas`));
  });
  if (hasReplicas && hasCapacity) {
    errs.push(
      invalid(SUBSETS, subsets, 'subset.Replicas and subset.MinReplicas/subset.MaxReplicas are mutually exclusive in a UnitedDeployment'),
    );
    return errs;
  }
  if (hasCapacity) {
    if (expected === -1) errs.push(invalid(SUBSETS, expected, 'spec.replicas must be not empty if you set subset.minReplicas/maxReplicas'));
    if (countMax >= subsets.length) errs.push(invalid(SUBSETS, countMax, 'at least one subset.maxReplicas must be empty'));
    if (sumMin > sumMax)
      errs.push(
        invalid(SUBSETS, sumMin, 'sum of indicated subset.minReplicas should not be greater than sum of indicated subset.maxReplicas'),
      );
  } else if (expected !== -1) {
    if (sum > expected)
      errs.push(
        invalid(SUBSETS, sum, `sum of indicated subset replicas ${sum} should not be greater than UnitedDeployment replicas ${expected}`),
      );
    if (countReplicas > 0 && countReplicas === subsets.length && sum !== expected) {
      errs.push(
        invalid(
          SUBSETS,
          sum,
          `if replicas of all subsets are provided, the sum of indicated subset replicas ${sum} should equal UnitedDeployment replicas ${expected}`,
        ),
      );
    }
  } else if (countReplicas !== subsets.length) {
    errs.push(invalid(SUBSETS, sum, 'if UnitedDeployment replicas is not provided, replicas of all subsets should be provided'));
  }
  return errs;
}

const TEMPLATE_KINDS = ['statefulSetTemplate', 'advancedStatefulSetTemplate', 'cloneSetTemplate', 'deploymentTemplate'] as const;

function validateSubsetTemplate(spec: UnitedDeploymentSpec, ctx: AdmissionContext): FieldError[] {
  const errs: FieldError[] = [];
  const t = (spec.template ?? {}) as Record<(typeof TEMPLATE_KINDS)[number], SubsetTemplate>;
  const path = 'spec.template';
  const count = TEMPLATE_KINDS.filter((k) => t[k] != null).length;
  if (count < 1)
    errs.push(
      required(path, 'should provide one of statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate, or deploymentTemplate'),
    );
  else if (count > 1)
    errs.push(
      invalid(
        path,
        t,
        'should provide only one of statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate, or deploymentTemplate',
      ),
    );
  const kind = TEMPLATE_KINDS.find((k) => t[k] != null);
  if (!kind) return errs;
  const w = t[kind];
  // Upstream reports an advancedStatefulSetTemplate label mismatch under statefulSetTemplate.
  const labelsPath = kind === 'advancedStatefulSetTemplate' ? 'statefulSetTemplate' : kind;
  const sel = labelSelectorAsSelector(spec.selector);
  if (!sel.matches(w.metadata?.labels ?? {})) {
    errs.push(invalid(`${path}.${labelsPath}.metadata.labels`, w.metadata?.labels ?? null, '`selector` does not match template `labels`'));
  }
  const what = kind === 'deploymentTemplate' ? 'deploymentTemplate' : kind;
  if (w.spec?.replicas != null)
    errs.push(invalid(`${path}.${kind}.spec.replicas`, w.spec.replicas, `replicas in ${what} will not be used`));
  if (kind === 'statefulSetTemplate' || kind === 'advancedStatefulSetTemplate') {
    const us = w.spec?.updateStrategy;
    if (us?.type === 'RollingUpdate' && us.rollingUpdate?.partition != null) {
      errs.push(
        invalid(
          `${path}.${kind}.spec.updateStrategy.rollingUpdate.partition`,
          us.rollingUpdate.partition,
          `partition in ${kind} will not be used`,
        ),
      );
    }
  }
  const podPath = `${path}.${kind}.spec.template`;
  const pod: PodTemplateSpec | undefined = w.spec?.template;
  if (kind === 'statefulSetTemplate' || kind === 'advancedStatefulSetTemplate') {
    errs.push(...validateSelectorMatchesTemplate(spec.selector, pod?.metadata?.labels, `${podPath}.metadata.labels`));
    errs.push(...validateLabels(pod?.metadata?.labels, `${podPath}.labels`));
  } else {
    errs.push(...validateSelectorMatchesTemplate(spec.selector, pod?.metadata?.labels, `${podPath}.metadata.labels`));
    const defaulted = defaultedTemplateCopy(pod, ctx.features);
    errs.push(...validatePodTemplateSpec(defaulted, podPath));
    const rp = defaulted.spec?.restartPolicy;
    if (rp !== 'Always') errs.push(notSupported(`${podPath}.spec.restartPolicy`, rp ?? '', ['Always']));
  }
  return errs;
}

export function validateUnitedDeploymentSpec(obj: UnitedDeployment, ctx: AdmissionContext): FieldError[] {
  const spec: UnitedDeploymentSpec = obj.spec ?? ({} as UnitedDeploymentSpec);
  const errs: FieldError[] = [...validateObjectMeta(obj.metadata)];
  errs.push(...validateNonnegative(spec.replicas, 'spec.replicas'));
  // Upstream's wording says statefulset for UnitedDeployments too.
  const sel = validateWorkloadSelector(spec.selector, 'spec.selector', 'statefulset');
  errs.push(...sel.errs);
  if (sel.ok) errs.push(...validateSubsetTemplate(spec, ctx));
  errs.push(...validateSubsetReplicas(spec));
  const names = new Set<string>();
  (spec.topology?.subsets ?? []).forEach((s, i) => {
    const p = `${SUBSETS}[${i}]`;
    if (!s.name) errs.push(required(`${p}.name`));
    if (names.has(s.name)) errs.push(invalid(`${p}.name`, s.name, `duplicated subset name ${s.name}`));
    names.add(s.name);
    const nameErrs = isDNS1123Label(s.name ?? '');
    if (nameErrs.length) errs.push(invalid(`${p}.name`, s.name, `invalid subset name ${nameErrs.join(', ')}`));
    errs.push(...validateNodeSelectorTerm(s.nodeSelectorTerm, `${p}.nodeSelectorTerm`));
    errs.push(...validateTolerations(s.tolerations, `${p}.tolerations`));
    if (spec.topology?.scheduleStrategy?.type === 'Adaptive' && s.replicas != null) {
      errs.push(invalid(`${p}.replicas`, s.replicas, 'specify replicas use minReplicas/maxReplicas to enable adaptive strategy'));
    }
  });
  for (const subset of Object.keys(spec.updateStrategy?.manualUpdate?.partitions ?? {}).sort()) {
    if (!names.has(subset)) {
      errs.push(
        invalid('spec.updateStrategy.partitions', spec.updateStrategy!.manualUpdate!.partitions, `subset ${subset} does not exist`),
      );
    }
  }
  return errs;
}

/** What the template checks read of a subset workload template, whichever kind it is. */
type SubsetTemplate = {
  metadata?: { labels?: Record<string, string> };
  spec?: Record<string, unknown> & {
    replicas?: number;
    updateStrategy?: { type?: string; rollingUpdate?: { partition?: number } };
    template?: PodTemplateSpec;
  };
};

function validateTemplateUpdate(spec: UnitedDeploymentSpec, oldSpec: UnitedDeploymentSpec): FieldError[] {
  const t = (spec.template ?? {}) as Partial<Record<(typeof TEMPLATE_KINDS)[number], SubsetTemplate>>;
  const o = (oldSpec.template ?? {}) as Partial<Record<(typeof TEMPLATE_KINDS)[number], SubsetTemplate>>;
  const errs: FieldError[] = [];
  for (const [kind, label] of [
    ['statefulSetTemplate', 'statefulsetTemplate'],
    ['advancedStatefulSetTemplate', 'advancedStatefulsetTemplate'],
  ] as const) {
    if (!t[kind] || !o[kind]) continue;
    const strip = (s: Record<string, unknown> | undefined) => {
      const { replicas: _r, template: _t, updateStrategy: _u, ...rest } = s ?? {};
      return rest;
    };
    if (!semanticEqual(strip(t[kind].spec), strip(o[kind].spec))) {
      errs.push(
        forbidden(
          `spec.template.${kind}.spec`,
          `updates to ${label} spec for fields other than 'template', and 'updateStrategy' are forbidden`,
        ),
      );
    }
    errs.push(...validateNonnegative(t[kind].spec?.replicas, `spec.template.${kind}.spec.replicas`));
    return errs;
  }
  if (t.deploymentTemplate && o.deploymentTemplate) {
    errs.push(...validateNonnegative(t.deploymentTemplate.spec?.replicas, 'spec.template.deploymentTemplate.spec.replicas'));
  }
  return errs;
}

export function validateUnitedDeploymentUpdate(obj: UnitedDeployment, old: UnitedDeployment): FieldError[] {
  const spec: UnitedDeploymentSpec = obj.spec ?? ({} as UnitedDeploymentSpec);
  const oldSpec: UnitedDeploymentSpec = old.spec ?? ({} as UnitedDeploymentSpec);
  const errs: FieldError[] = [];
  if (!semanticEqual(spec.selector, oldSpec.selector)) errs.push(invalid('spec.selector', spec.selector ?? null, 'field is immutable'));
  errs.push(...validateTemplateUpdate(spec, oldSpec));
  const before = new Map((oldSpec.topology?.subsets ?? []).map((s) => [s.name, s]));
  (spec.topology?.subsets ?? []).forEach((s, i) => {
    const o = before.get(s.name);
    if (!o) return;
    if (!semanticEqual(o.nodeSelectorTerm, s.nodeSelectorTerm))
      errs.push(forbidden(`${SUBSETS}[${i}].nodeSelectorTerm`, 'may not be changed in an update'));
    if (!semanticEqual(o.tolerations, s.tolerations))
      errs.push(forbidden(`${SUBSETS}[${i}].tolerations`, 'may not be changed in an update'));
  });
  errs.push(...validateNonnegative(spec.replicas, 'spec.replicas'));
  return errs;
}

export function validateUnitedDeployment(obj: UnitedDeployment, old: UnitedDeployment | undefined, ctx: AdmissionContext): FieldError[] {
  switch (ctx.operation) {
    case 'CREATE':
      return validateUnitedDeploymentSpec(obj, ctx);
    case 'UPDATE':
      return [...validateUnitedDeploymentSpec(obj, ctx), ...(old ? validateUnitedDeploymentUpdate(obj, old) : [])];
    case 'DELETE': {
      const target = old ?? obj;
      checkWorkloadDeletion(target, target?.spec?.replicas, ctx.features);
      return [];
    }
    default:
      return [];
  }
}
