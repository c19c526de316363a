// Differential admission check against upstream (issue #10): the generated corpus
// (test/harness/admission-corpus.ts) goes through both admission chains — ours, the suite's
// manager on the test cluster; upstream's kruise-manager v1.8.2 on a cluster of its own — each
// object mutated then validated as an API server would. Every object accepted by one side and
// refused by the other fails the test unless DELIBERATE below says why we differ on purpose
// (summarised in docs/admission-differences.md). Differing messages where both refuse are
// reported, not failed: the message tables are audited by hand against upstream's source.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AdmissionChain, type Verdict } from '../harness/admission-chain.ts';
import { admissionCorpus, type CorpusCase } from '../harness/admission-corpus.ts';
import { SUITE_FEATURE_GATES, testCluster } from '../harness/cluster.ts';
import { startUpstreamPeer, type RunningPeer } from '../harness/upstream-peer.ts';
import { ensureUpstreamPeer } from '../../src/cluster/binaries.ts';

/** Differences we keep on purpose: the case ids they cover, and why. */
const DELIBERATE: Array<{ ids: RegExp; reason: string }> = [
  {
    // Spec §3.10: minReadySeconds ≥ 0 and revisionHistoryLimit ≥ 0. Upstream v1.8.2 (and master)
    // accept negatives, which its controller then reads as "no history" / "ready at once".
    ids: /^CloneSet\/v1alpha1 (CREATE|UPDATE) spec\.(minReadySeconds|revisionHistoryLimit)=-1$/,
    reason: 'spec §3.10 refuses negative minReadySeconds/revisionHistoryLimit; upstream accepts them',
  },
  {
    // Spec §3.10: the Kruise percent parser rejects "5" (no %). v1.8.2 reads it as 5%.
    ids: /^CloneSet\/v1alpha1 CREATE spec\.updateStrategy\.(maxSurge|maxUnavailable)="5"$/,
    reason: 'spec §3.10 refuses an int-or-percent string without %; upstream v1.8.2 reads "5" as 5%',
  },
  {
    // Spec §EphemeralJob: replicas/parallelism/ttl/deadline non-negative; upstream validates only the
    // ephemeral containers.
    ids: /^EphemeralJob\/v1alpha1 (CREATE|UPDATE) spec\.(replicas|parallelism|activeDeadlineSeconds|ttlSecondsAfterFinished)=-1$/,
    reason: 'spec §EphemeralJob refuses negative counters; upstream does not check them',
  },
  {
    // Spec §ImagePullJob and upstream master's ImageListPullJob: parallelism is a non-negative
    // integer, never a percentage. v1.8.2 accepts anything and its controller fails on it later.
    ids: /^Image(List)?PullJob\/v1alpha1 (CREATE|UPDATE) spec\.parallelism=(-1|"-1%"|"%"|"101%"|"50%"|"0%"|""|"abc")$/,
    reason: 'spec §ImagePullJob / upstream master refuse a negative or percentage parallelism; v1.8.2 accepts it',
  },
];

interface Outcome {
  c: CorpusCase;
  ours: Verdict;
  theirs: Verdict;
}

const verdictOf = (allowed: boolean, message: string): Verdict => ({ allowed, message, defaulted: undefined });

/** Runs fn over items with at most `limit` in flight. */
async function pool<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

describe('admission chains, Kruise TS against upstream kruise-manager', () => {
  let peer: RunningPeer | undefined;
  let ours: AdmissionChain;
  let theirs: AdmissionChain;

  before(async () => {
    peer = await startUpstreamPeer({ featureGates: SUITE_FEATURE_GATES });
    theirs = await AdmissionChain.of(peer.cluster);
    ours = await AdmissionChain.of(testCluster());
  });

  after(async () => {
    ours?.close();
    theirs?.close();
    await peer?.stop();
  });

  test('every corpus object gets the same verdict from both, or a documented one', async (t) => {
    const corpus = admissionCorpus((await ensureUpstreamPeer()).moduleDir);
    // What each side stored for a sample: the base of its UPDATE cases.
    const stored = new Map<string, Promise<unknown>>();
    const storedBy = (side: AdmissionChain, which: string, c: CorpusCase) => {
      const key = `${which} ${c.target.kind}/${c.target.version}`;
      // What the API server adds on create; an UPDATE without a resourceVersion is refused upstream.
      const persisted = (v: Verdict) => {
        const o = v.defaulted as { metadata: Record<string, unknown> };
        o.metadata = {
          ...o.metadata,
          resourceVersion: '1',
          uid: '00000000-0000-0000-0000-000000000001',
          generation: 1,
          creationTimestamp: '2026-01-01T00:00:00Z',
        };
        return o;
      };
      if (!stored.has(key)) stored.set(key, side.admit(c.target, 'CREATE', c.sample).then(persisted));
      return stored.get(key)!;
    };
    const run = async (side: AdmissionChain, which: string, c: CorpusCase): Promise<Verdict> => {
      if (!side.serves(c.target, c.op)) return verdictOf(true, '(no webhook serves this)');
      try {
        if (c.op === 'CREATE') {
          const object = structuredClone(c.sample);
          c.edit(object);
          return await side.admit(c.target, 'CREATE', object);
        }
        const old = await storedBy(side, which, c);
        const object = structuredClone(old);
        c.edit(object);
        return await side.admit(c.target, 'UPDATE', object, old);
      } catch (err) {
        return verdictOf(false, `(transport error) ${(err as Error).message}`);
      }
    };

    const began = Date.now();
    const outcomes = await pool(corpus, 6, async (c): Promise<Outcome> => {
      const [o, u] = await Promise.all([run(ours, 'ours', c), run(theirs, 'upstream', c)]);
      return { c, ours: o, theirs: u };
    });
    const seconds = ((Date.now() - began) / 1000).toFixed(1);

    const differing = outcomes.filter((o) => o.ours.allowed !== o.theirs.allowed);
    const explained = (id: string) => DELIBERATE.find((d) => d.ids.test(id));
    const unexplained = differing.filter((o) => !explained(o.c.id));
    const stale = DELIBERATE.filter((d) => !differing.some((o) => d.ids.test(o.c.id)));
    const wording = outcomes.filter((o) => !o.ours.allowed && !o.theirs.allowed && o.ours.message !== o.theirs.message);

    const row = (o: Outcome) =>
      `| ${o.c.id} | ${o.ours.allowed ? 'allowed' : `denied: ${o.ours.message}`} | ${o.theirs.allowed ? 'allowed' : `denied: ${o.theirs.message}`} |`;
    const report = [
      `# Admission differences: Kruise TS vs upstream kruise-manager ${peer!.version}`,
      '',
      `${corpus.length} corpus objects in ${seconds}s; ${differing.length} verdicts differ (${unexplained.length} not in DELIBERATE); ${wording.length} refusals worded differently.`,
      '',
      '## Verdicts that differ',
      '',
      '| case | Kruise TS | upstream |',
      '|---|---|---|',
      ...differing.map((o) => `${row(o)}${explained(o.c.id) ? '' : ' **unexplained**'}`),
      '',
      '## Refusals worded differently',
      '',
      '| case | Kruise TS | upstream |',
      '|---|---|---|',
      ...wording.map(row),
    ].join('\n');
    const reportFile = path.join(peer!.cluster.runDir, 'logs', 'admission-differential.md');
    writeFileSync(reportFile, report + '\n');
    t.diagnostic(
      `${corpus.length} objects, ${seconds}s, ${differing.length} verdicts differ, ${wording.length} messages differ; full table: ${reportFile}`,
    );

    assert.deepEqual(
      stale.map((d) => d.ids.source),
      [],
      'DELIBERATE entries that no longer match any difference (remove them)',
    );
    assert.deepEqual(
      unexplained.map((o) => row(o)),
      [],
      `verdicts that differ from upstream (see ${reportFile})`,
    );
  });
});
