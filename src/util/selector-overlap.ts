// Whether two label selectors can select a common label set (upstream util.IsSelectorOverlapping /
// IsSelectorLooseOverlap): they overlap unless some key carries contradictory requirements —
// different required values, disjoint In sets, a value excluded by NotIn, Exists vs DoesNotExist.
// Used to detect SidecarSets and PodUnavailableBudgets that would select the same pods.
import type { LabelSelectorLike } from './labelselector.ts';

interface KeyConstraint {
  allowed?: Set<string>;
  excluded: Set<string>;
  mustExist: boolean;
  mustNotExist: boolean;
}

function addConstraints(into: Map<string, KeyConstraint>, sel: LabelSelectorLike): void {
  const get = (key: string) => {
    let c = into.get(key);
    if (!c) into.set(key, (c = { excluded: new Set(), mustExist: false, mustNotExist: false }));
    return c;
  };
  const restrict = (c: KeyConstraint, values: readonly string[]) => {
    c.allowed = new Set(c.allowed ? values.filter((v) => c.allowed!.has(v)) : values);
    c.mustExist = true;
  };
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) restrict(get(k), [v]);
  for (const e of sel.matchExpressions ?? []) {
    const c = get(e.key);
    switch (e.operator) {
      case 'In':
        restrict(c, e.values ?? []);
        break;
      case 'NotIn':
        for (const v of e.values ?? []) c.excluded.add(v);
        break;
      case 'Exists':
        c.mustExist = true;
        break;
      case 'DoesNotExist':
        c.mustNotExist = true;
        break;
    }
  }
}

export function selectorsOverlap(a: LabelSelectorLike | null | undefined, b: LabelSelectorLike | null | undefined): boolean {
  const constraints = new Map<string, KeyConstraint>();
  addConstraints(constraints, a ?? {});
  addConstraints(constraints, b ?? {});
  for (const c of constraints.values()) {
    if (c.mustNotExist && c.mustExist) return false;
    if (c.allowed && ![...c.allowed].some((v) => !c.excluded.has(v))) return false;
  }
  return true;
}
