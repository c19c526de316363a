// The update order shared by workloads and SidecarSets (upstream pkg/util/updatesort): priority
// (weight or order terms) and scatter (spread pods of each term evenly over the order).
import type { UpdatePriorityStrategy, UpdateScatterStrategy } from '../apis/apps/pub.ts';
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

function scatterGroup(matched: number, unmatched: number) {
  const groupNum = Math.min(matched, unmatched);
  return {
    groupNum,
    matchedGroupSize: Math.round(matched / groupNum),
    unmatchedGroupSize: Math.round(unmatched / groupNum),
    unmatchedRemainder: 0,
  };
}

function groupByDensity(totalMatched: number, totalUnmatched: number, updateMatched: number, updateUnmatched: number) {
  const total = scatterGroup(totalMatched, totalUnmatched);
  const update = scatterGroup(updateMatched, updateUnmatched);
  if (Math.fround(totalUnmatched / totalMatched) >= Math.fround(updateUnmatched / updateMatched)) return update;
  const g = { ...total, groupNum: 0, unmatchedRemainder: 0 };
  const a = Math.trunc(updateMatched / g.matchedGroupSize);
  const b = Math.trunc(updateUnmatched / g.unmatchedGroupSize);
  g.groupNum = a < b ? a : b;
  g.unmatchedRemainder = updateUnmatched - g.groupNum * g.unmatchedGroupSize;
  return g;
}

function scatterByTerm(term: { key: string; value: string }, pods: readonly Pod[], indexes: number[]): number[] {
  const matches = (p: Pod) => (p.metadata.labels?.[term.key] ?? '') === term.value;
  let matched = indexes.filter((i) => matches(pods[i]));
  let unmatched = indexes.filter((i) => !matches(pods[i]));
  if (matched.length <= 1 || unmatched.length <= 1) return indexes;
  let totalMatched = pods.filter(matches).length;
  const totalUnmatched = pods.length - totalMatched;
  const last = matched[matched.length - 1];
  matched = matched.slice(0, -1);
  totalMatched--;
  const g = groupByDensity(totalMatched, totalUnmatched, matched.length, unmatched.length);
  const out: number[] = [];
  if (g.unmatchedRemainder > 0) {
    out.push(...unmatched.slice(0, g.unmatchedRemainder));
    unmatched = unmatched.slice(g.unmatchedRemainder);
  }
  const migrate = (src: number[], size: number): number[] => {
    if (src.length === 0) return src;
    if (src.length < size) {
      out.push(...src);
      return [];
    }
    out.push(...src.slice(0, size));
    return src.slice(size);
  };
  for (let i = 0; i < g.groupNum; i++) {
    matched = migrate(matched, g.matchedGroupSize);
    unmatched = migrate(unmatched, g.unmatchedGroupSize);
  }
  out.push(...matched, ...unmatched, last);
  return out;
}

/** scatterStrategy: spread pods matching each term evenly over the update order. */
export function sortByScatter(strategy: UpdateScatterStrategy | undefined, pods: readonly Pod[], indexes: number[]): number[] {
  if (!strategy || strategy.length === 0 || indexes.length <= 1) return indexes;
  let terms = strategy;
  if (strategy.length > 1) {
    const counts = new Map<string, number>();
    const found: Array<{ key: string; value: string }> = [];
    for (const term of strategy) {
      for (const i of indexes) {
        if (pods[i].metadata.labels?.[term.key] !== term.value) continue;
        const id = `${term.key}:${term.value}`;
        if (!counts.has(id)) found.push({ key: term.key, value: term.value });
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
    }
    terms = found
      .map((t, i) => ({ t, i }))
      .sort((a, b) => counts.get(`${b.t.key}:${b.t.value}`)! - counts.get(`${a.t.key}:${a.t.value}`)! || a.i - b.i)
      .map(({ t }) => t);
  }
  let out = indexes;
  for (const term of terms) out = scatterByTerm(term, pods, out);
  return out;
}
