// Update priority (upstream pkg/util/updatesort priority sorter), shared by CloneSet and Advanced
// StatefulSet: weightPriority sums matching terms' weights, orderPriority compares the trailing
// integer of the first present key; ties keep the higher index first.

import type { UpdatePriorityStrategy } from '../apis/apps/pub.ts';
import type { Pod } from '../apis/core-objects.ts';
import { matchesLabelSelector } from './labelselector.ts';

const trailingInt = (v: string): number => {
  const m = /(\d+)$/.exec(v);
  return m ? Number(m[1]) : 0;
};

/** priorityStrategy: weight (sum of matching terms) descending, or orderPriority; ties by pod index descending. */
export function sortByPriority(strategy: UpdatePriorityStrategy | undefined, pods: readonly Pod[], indexes: number[]): number[] {
  const weights = strategy?.weightPriority ?? [];
  const orders = strategy?.orderPriority ?? [];
  if (weights.length === 0 && orders.length === 0) return indexes;
  const weightOf = (p: Pod) =>
    weights.reduce((w, term) => {
      try {
        return matchesLabelSelector(term.matchSelector, p.metadata.labels) ? w + term.weight : w;
      } catch {
        return w;
      }
    }, 0);
  const orderOf = (p: Pod): [number, number] => {
    for (let i = 0; i < orders.length; i++) {
      const v = p.metadata.labels?.[orders[i].orderedKey];
      if (v !== undefined) return [i, trailingInt(v)];
    }
    return [-1, 0];
  };
  return [...indexes].sort((a, b) => {
    if (weights.length > 0) {
      const d = weightOf(pods[b]) - weightOf(pods[a]);
      if (d !== 0) return d;
    } else {
      const [la, oa] = orderOf(pods[a]);
      const [lb, ob] = orderOf(pods[b]);
      if (la !== lb) return la - lb;
      if (oa !== ob) return ob - oa;
    }
    return b - a;
  });
}
