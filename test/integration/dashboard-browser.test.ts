// `kubectl kruise dashboard` in a real browser: Debian's chromium, headless, driven by
// playwright-core, against the suite's cluster during a CloneSet rollout. The page lists the
// workloads with their progress, shows one workload's pods by revision with the partition and the
// budget, plans a proposed change round by round, and follows the rollout live (the server's event
// stream; the page is never reloaded). Its screenshots go to a temporary directory;
// KRUISE_TS_UPDATE_SCREENSHOTS=1 writes them over the ones docs/kubectl-kruise.md shows
// (docs/images/dashboard-*.png), so that a test run leaves the checkout as it was.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { repoRoot } from '../../src/cluster/binaries.ts';
import { startDashboard, type Dashboard } from '../../src/cli/kubectl/dashboard/server.ts';
import { openSession, type Session } from '../../src/cli/kubectl/session.ts';
import { CloneSets } from '../../src/runtime/resources.ts';
import { apply, createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, waitSettled } from './cloneset-helpers.ts';
import { stsManifest, waitOrdinals } from './statefulset-helpers.ts';

const CHROMIUM = process.env.KRUISE_TS_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS =
  process.env.KRUISE_TS_UPDATE_SCREENSHOTS === '1' ? path.join(repoRoot, 'docs/images') : mkdtempSync(path.join(tmpdir(), 'dashboard-'));
const shot = (name: string) => path.join(SHOTS, `dashboard-${name}.png`);

let session: Session;
let ns: string;
let dashboard: Dashboard;
let browser: Browser;

before(async () => {
  session = openSession({ kubeconfig: testCluster().kubeconfig });
  ns = await createNamespace('dash');
});
after(async () => {
  await browser?.close();
  await dashboard?.close();
  await deleteNamespace(ns);
  await session.close();
});

const text = (page: Page, selector: string) => page.locator(selector).innerText();

test('dashboard: workloads, one CloneSet by revision with partition and budget, its rollout plan, live during the rollout', async () => {
  // The CloneSet (6 replicas, partition 2, maxUnavailable 1); minReadySeconds paces the
  // rounds so that the page is seen mid-rollout.
  const cs = cloneSetManifest('web', { replicas: 6, partition: 2, maxUnavailable: 1 });
  (cs.spec as Record<string, unknown>).minReadySeconds = 5;
  // The first requests of a fresh cluster may find the manager's webhooks not served yet.
  const admitted = (manifest: object) =>
    waitFor(
      'the manifest admitted',
      () =>
        apply(manifest, ns).then(
          () => true,
          () => false,
        ),
      60_000,
      1000,
    );
  await admitted(cs);
  await admitted(stsManifest('db', { replicas: 3 }));
  await waitSettled(session.client, ns, 'web', 6, { timeoutMs: 90_000 });
  await waitOrdinals(session.client, ns, 'db', [0, 1, 2], { timeoutMs: 90_000 });

  dashboard = await startDashboard(session, { port: 0, address: '127.0.0.1', namespace: ns });
  // Read-only: nothing but GET.
  assert.equal((await fetch(`${dashboard.url}api/workloads`, { method: 'POST' })).status, 405);

  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(dashboard.url);
  await page.locator('[data-testid=live]', { hasText: 'live' }).waitFor();

  // 1. Every Kruise workload, with its rollout progress.
  const row = page.locator(`[data-workload="CloneSet/${ns}/web"]`);
  await row.waitFor();
  assert.match(await row.innerText(), /CloneSet\s+dash-\S+\s+web\s+.*6\/6\s+2\s/s);
  await page.locator(`[data-workload="StatefulSet/${ns}/db"]`).waitFor();

  // 2. One workload: pods by revision, the partition and the budget in use.
  await row.click();
  await page.locator('[data-testid=title]', { hasText: `CloneSet ${ns}/web` }).waitFor();
  assert.equal(await page.locator('[data-testid=revisions] [data-pod]').count(), 6);
  const budget = await text(page, '[data-testid=budget]');
  assert.match(budget, /partition\s+2\s+2 pod\(s\) kept at old revisions/);
  assert.match(budget, /maxUnavailable\s+0 \/ 1/);

  // 3. The rollout plan of a proposed change: four rounds, one pod each, then the partition stops it.
  await page.fill('input[name=image]', 'main=nginx:2.0');
  await page.click('form.plan button');
  const end = page.locator('[data-testid=plan-end]');
  await end.waitFor();
  const kept = /stops after round 4: partition 2 keeps (\S+), (\S+) at old revisions/.exec(await end.innerText());
  assert.ok(kept, 'the plan ends at the partition');
  const planned = await page.locator('[data-testid=plan] tr[data-round] td:nth-child(2)').allInnerTexts();
  assert.equal(planned.length, 4);
  await page.screenshot({ path: shot('plan'), fullPage: true });

  // 4. The change itself: the page follows the rollout from the watches, without a reload.
  await session.client.patch(
    CloneSets,
    'web',
    { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } } },
    { namespace: ns, patchType: 'application/merge-patch+json' },
  );
  const updateGroup = page.locator('[data-testid=revisions] .group.update');
  await page.waitForFunction(
    () => {
      const update = document.querySelectorAll('[data-testid=revisions] .group.update [data-pod]').length;
      return update >= 1 && update < 4;
    },
    undefined,
    { timeout: 60_000 },
  );
  assert.ok((await page.locator('[data-testid=revisions] .group:not(.update)').count()) >= 1, 'old pods in their own group');
  await page.screenshot({ path: shot('rollout'), fullPage: true });
  // The list, mid-rollout.
  await page.click('text=← all workloads');
  await row.waitFor();
  await page.screenshot({ path: shot('workloads'), fullPage: true });
  await row.click();
  // Done: four pods at the update revision and the last replaced pod gone (not only Terminating).
  await page.waitForFunction(
    () =>
      document.querySelectorAll('[data-testid=revisions] .group.update [data-pod]').length === 4 &&
      document.querySelectorAll('[data-testid=revisions] .group:not(.update) [data-pod]').length === 2,
    undefined,
    { timeout: 90_000 },
  );
  // The pods the plan kept are the pods left at the old revision (the controller did as planned).
  const old = await page
    .locator('[data-testid=revisions] .group:not(.update) [data-pod]')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-pod')));
  assert.deepEqual(old, [kept[1], kept[2]]);
  assert.equal(await updateGroup.locator('[data-pod]').count(), 4);
  const events = await text(page, '[data-testid=events]');
  assert.match(events, /SuccessfulUpdatePodReCreate/);
  await page.click('text=← all workloads');
  await page.locator(`[data-workload="CloneSet/${ns}/web"]`, { hasText: '4/4' }).waitFor();
  assert.deepEqual(errors, []);
});
