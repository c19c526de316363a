// test/harness/upstream-e2e-report.ts: upstream's focus groups, Ginkgo v1's JUnit report read into
// per-spec results, and the generated part of docs/upstream-e2e.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BEGIN,
  END,
  E2E_GROUPS,
  firstFailureLine,
  groupOfSpec,
  lastAttempts,
  parseJUnit,
  renderDoc,
  selected,
  type E2EResults,
} from '../../harness/upstream-e2e-report.ts';

// As Go's encoding/xml writes Ginkgo v1's JUnitTestSuite (entities for quotes and newlines).
const junit = `<?xml version="1.0" encoding="UTF-8"?>
  <testsuite name="Kruise e2e suite" tests="3" failures="1" errors="0" time="100.5">
      <testcase name="[apps] CloneSet CloneSet Scaling should scale up" classname="Kruise e2e suite" time="12.6"></testcase>
      <testcase name="[apps] CloneSet CloneSet Updating in-place update &#34;image&#34;" classname="Kruise e2e suite" time="300.2">
          <failure type="Failure">/root/go/pkg/mod/github.com/openkruise/kruise@v1.8.2/test/e2e/apps/cloneset.go:55&#xA;Timed out after 300.000s.&#xA;Expected&#xA;    &lt;int32&gt;: 1&#xA;to equal&#xA;    &lt;int32&gt;: 2&#xA;/root/go/pkg/mod/github.com/openkruise/kruise@v1.8.2/test/e2e/apps/cloneset.go:712</failure>
          <system-out>log</system-out>
      </testcase>
      <testcase name="[apps] StatefulSet Basic should work" classname="Kruise e2e suite" time="0">
          <skipped></skipped>
      </testcase>
      <testcase name="[apps] AppStatefulSetStorage Resize PVC expands" classname="Kruise e2e suite" time="1.2">
          <skipped>/x/statefulset.go:70&#xA;no default storage class&#xA;/x/framework/pv_util.go:58</skipped>
      </testcase>
  </testsuite>`;

test('every testcase becomes a result: pass, fail with its first message line and location, skip', () => {
  const specs = parseJUnit(junit);
  assert.deepEqual(
    specs.map((s) => [s.name, s.result.status, s.result.seconds]),
    [
      ['[apps] CloneSet CloneSet Scaling should scale up', 'pass', 13],
      ['[apps] CloneSet CloneSet Updating in-place update "image"', 'fail', 300],
      ['[apps] StatefulSet Basic should work', 'skip', 0],
      ['[apps] AppStatefulSetStorage Resize PVC expands', 'skip', 1],
    ],
  );
  assert.equal(specs[1]!.result.firstFailure, 'Timed out after 300.000s. (cloneset.go:712)');
  assert.equal(specs[2]!.result.firstFailure, undefined);
  assert.equal(specs[3]!.result.firstFailure, 'no default storage class (pv_util.go:58)');
});

test('with flakeAttempts every attempt is listed: a spec is its last attempt, flaked when an earlier one failed', () => {
  const pass = { status: 'pass', seconds: 5 } as const;
  const fail = { status: 'fail', seconds: 3, firstFailure: 'Timed out after 3.000s.' } as const;
  const { specs, flaked } = lastAttempts([
    { name: 'a', result: fail },
    { name: 'a', result: pass },
    { name: 'b', result: pass },
    { name: 'c', result: fail },
    { name: 'c', result: fail },
  ]);
  assert.deepEqual(
    specs.map((s) => [s.name, s.result.status]),
    [
      ['a', 'pass'],
      ['b', 'pass'],
      ['c', 'fail'],
    ],
  );
  assert.deepEqual(flaked, ['a']);
});

test('firstFailureLine skips blank lines and keeps a message without a location', () => {
  assert.equal(firstFailureLine('/a/b.go:1\n\n  boom  \nmore\n/a/c.go:9'), 'boom (c.go:9)');
  assert.equal(firstFailureLine('just text'), 'just text');
});

test("groups are upstream's CI jobs; every spec falls in exactly one", () => {
  assert.deepEqual(
    E2E_GROUPS.map((g) => g.name),
    ['asts-storage', 'asts', 'pull-image', 'daemonset', 'sidecarset', 'ephemeraljob', 'pub', 'cloneset', 'other'],
  );
  const cases: Array<[string, string]> = [
    ['[apps] AppStatefulSetStorage Resize PVC x', 'asts-storage'],
    ['[apps] StatefulSet Basic StatefulSet functionality x', 'asts'],
    ['[apps] PullImages x', 'pull-image'],
    ['[apps] ContainerRecreateRequest x', 'pull-image'],
    ['[apps] DaemonSet x', 'daemonset'],
    ['[apps] SidecarSet x', 'sidecarset'],
    ['[apps] EphemeralJob x', 'ephemeraljob'],
    ['[policy] PodUnavailableBudget x', 'pub'],
    ['[apps] InplaceVPA x', 'cloneset'],
    ['[apps] workloadspread x', 'other'],
    ['[policy] PersistentPodState x', 'other'],
  ];
  for (const [spec, group] of cases) {
    assert.equal(groupOfSpec(spec), group, spec);
    assert.deepEqual(
      E2E_GROUPS.filter((g) => selected(spec, g)).map((g) => g.name),
      [group],
      spec,
    );
  }
});

test("only the SidecarSet job installs Kruise without the e2e config, as upstream's workflow (DISABLE_E2E_CONFIG=true)", () => {
  assert.deepEqual(
    E2E_GROUPS.filter((g) => !g.e2eConfig).map((g) => g.name),
    ['sidecarset'],
  );
});

test('the doc keeps its hand-written parts and gets one table per group that ran', () => {
  const results: E2EResults = {
    runs: [
      {
        id: 'a',
        manager: 'ts',
        group: 'cloneset',
        date: 'd',
        commit: 'c1',
        command: 'cmd ts',
        minutes: 3,
        pass: 1,
        fail: 1,
        skip: 0,
        managerDied: false,
      },
      {
        id: 'b',
        manager: 'go',
        group: 'cloneset',
        date: 'd',
        commit: 'c1',
        command: 'cmd go',
        minutes: 4,
        pass: 2,
        fail: 0,
        skip: 0,
        managerDied: true,
      },
    ],
    specs: {
      '[apps] CloneSet b | pipe': {
        group: 'cloneset',
        ts: { status: 'fail', seconds: 300, firstFailure: 'Timed out (x.go:1)' },
        go: { status: 'pass', seconds: 20 },
      },
      '[apps] CloneSet a': { group: 'cloneset', ts: { status: 'pass', seconds: 10 }, go: { status: 'pass', seconds: 11 } },
    },
  };
  const doc = `# Title\n\nintro\n\n${BEGIN}\nold\n${END}\n\n## Hand-written\n`;
  const out = renderDoc(doc, results);
  assert.ok(out.startsWith('# Title\n\nintro\n\n' + BEGIN));
  assert.ok(out.endsWith(`${END}\n\n## Hand-written\n`));
  assert.ok(!out.includes('\nold\n'));
  assert.match(out, /\| cloneset \| v1\.8\.2 \| d \| c1 \| 4 \| 2 \| 0 \| 0 \| `cmd go` \(the manager died during the run\) \|/);
  assert.match(out, /Specs both ran: 2; pass under Kruise TS: 1, under v1\.8\.2: 2; fail only under Kruise TS: 1\./);
  const rows = out.split('\n').filter((l) => l.startsWith('| [apps]'));
  assert.deepEqual(rows, [
    '| [apps] CloneSet a | pass 10 s | pass 11 s |  |',
    '| [apps] CloneSet b \\| pipe | **fail** 300 s | pass 20 s | TS: Timed out (x.go:1) |',
  ]);
  // Without markers the section is appended; rendering twice changes nothing.
  const appended = renderDoc('# T\n', results);
  assert.ok(appended.startsWith('# T\n\n' + BEGIN));
  assert.equal(renderDoc(appended, results), appended);
});
