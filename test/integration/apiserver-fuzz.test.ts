// Bad input through the API server (issue #34): fuzzed objects of every Kruise kind and served
// version, sent as dry-run creates, reach the CRD schema check and the suite manager's webhooks over
// the network. No answer may be a 500 (from a webhook, or the API server failing to call one), and a
// refusal of a wrong-typed field, or of a ContainerRecreateRequest's impossible pod name, names the
// field. A smoke count here (FUZZ_COUNT); bench/chaos.ts sends 10,000.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, deleteNamespace, testCluster } from '../harness/cluster.ts';
import { fuzzThroughApiServer } from '../harness/apiserver-fuzz.ts';

const COUNT = Number(process.env.FUZZ_COUNT ?? 400);
const SEED = Number(process.env.FUZZ_SEED ?? 20261206);

let ns: string;
before(async () => {
  ns = await createNamespace('fuzz');
});
after(async () => {
  await deleteNamespace(ns);
});

test(`${COUNT} fuzzed objects through the API server: no 500, refusals name their field`, { timeout: 300_000 }, async (t) => {
  const outcome = await fuzzThroughApiServer({ kubeconfig: testCluster().kubeconfig, namespace: ns, count: COUNT, seed: SEED });
  t.diagnostic(
    `sent ${outcome.sent}: admitted ${outcome.admitted}, refused ${outcome.refused} (${outcome.webhookRefusals} by a webhook, ` +
      `${outcome.refusalsNamingAField} naming a field), 5xx ${outcome.serverErrors.length}`,
  );
  const show = (cases: typeof outcome.serverErrors) =>
    cases
      .slice(0, 20)
      .map((c) => `  ${c.case} → ${c.code} ${c.message}`)
      .join('\n');
  assert.equal(outcome.sent, COUNT);
  assert.equal(outcome.serverErrors.length, 0, `answers of 500 or more (seed ${SEED}):\n${show(outcome.serverErrors)}`);
  assert.equal(outcome.unnamed.length, 0, `refusals not naming the wrong field (seed ${SEED}):\n${show(outcome.unnamed)}`);
});
