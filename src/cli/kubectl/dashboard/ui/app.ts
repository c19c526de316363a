/// <reference lib="dom" />
// The dashboard page (runs in the browser; hack/build.sh bundles it with preact and htm into
// dist/dashboard/app.js). Two views, chosen by the location's hash: every Kruise workload with its
// rollout progress (#/), and one workload (#/Kind/namespace/name): its pods grouped by revision,
// the partition and budget, events, and the rollout plan of a proposed change. The server's event
// stream says when a watch delivered a change; the page then fetches what it shows again.
import { html, render } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { PlanReport } from '../../plan.ts';
import type { RolloutForecast } from '../../plan-rollout.ts';
import type { RevisionGroup, WorkloadDetail, WorkloadSummary } from '../model.ts';

interface PlanAnswer {
  report: PlanReport;
  rollout: RolloutForecast;
  text: string;
}

async function getJSON<T>(url: string): Promise<T> {
  const res = await fetch(url);
  const body = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(body.error ?? `${res.status} ${res.statusText}`);
  return body;
}

/** Bumped on every change the server's stream reports: views refetch when it moves. */
function useLiveVersion(): { version: number; connected: boolean } {
  const [version, setVersion] = useState(0);
  const [connected, setConnected] = useState(false);
  useEffect(() => {
    const stream = new EventSource('/api/stream');
    stream.onopen = () => setConnected(true);
    stream.onerror = () => setConnected(false);
    stream.onmessage = () => setVersion((v) => v + 1);
    return () => stream.close();
  }, []);
  return { version, connected };
}

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function Progress({ done, total, complete }: { done: number; total: number; complete: boolean }) {
  const pct = total <= 0 ? 100 : Math.min(100, Math.round((done / total) * 100));
  return html`<span class=${complete ? 'bar done' : 'bar'} title=${`${done}/${total}`}><span style=${`width:${pct}%`}></span></span
    ><span class="num">${done}/${total}</span>`;
}

const workloadHash = (w: Pick<WorkloadSummary, 'kind' | 'namespace' | 'name'>) =>
  `#/${w.kind}/${encodeURIComponent(w.namespace || '-')}/${encodeURIComponent(w.name)}`;

function WorkloadList({ version }: { version: number }) {
  const [rows, setRows] = useState<WorkloadSummary[] | undefined>();
  const [error, setError] = useState('');
  useEffect(() => {
    getJSON<WorkloadSummary[]>('/api/workloads').then(setRows, (e: Error) => setError(e.message));
  }, [version]);
  if (error) return html`<p class="error">${error}</p>`;
  if (!rows) return html`<p class="muted">loading…</p>`;
  return html`<h2>Kruise workloads</h2>
    <table data-testid="workloads">
      <thead>
        <tr>
          <th>KIND</th>
          <th>NAMESPACE</th>
          <th>NAME</th>
          <th>ROLLOUT (updated / target)</th>
          <th>READY</th>
          <th>PARTITION</th>
          <th>STATUS</th>
        </tr>
      </thead>
      <tbody>
        ${
          rows.length === 0 &&
          html`<tr>
            <td colspan="7" class="muted">no Kruise workloads</td>
          </tr>`
        }
        ${rows.map(
          (w) =>
            html`<tr class="row" data-workload=${`${w.kind}/${w.namespace}/${w.name}`} onClick=${() => (location.hash = workloadHash(w))}>
              <td>${w.title}</td>
              <td>${w.namespace || html`<span class="muted">cluster</span>`}</td>
              <td><a href=${workloadHash(w)}>${w.name}</a></td>
              <td><${Progress} done=${w.updated} total=${w.target} complete=${w.done} /></td>
              <td>${w.ready}/${w.desired}</td>
              <td>${w.partition || ''}</td>
              <td>${w.paused ? html`<span class="tag paused">paused</span> ` : ''}${w.message}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

function RevisionPods({ group }: { group: RevisionGroup }) {
  return html`<div class=${group.update ? 'group update' : 'group'} data-revision=${group.revision}>
    <h3>
      ${group.update ? html`<span class="tag update">update revision</span>` : html`<span class="tag">old revision</span>`}
      ${' '}${group.revision || '(no revision label)'} <span class="num">${group.pods.length} pod(s)</span>
    </h3>
    <table>
      <thead>
        <tr>
          <th>POD</th>
          <th>READY</th>
          <th>STATE</th>
          <th>NODE</th>
          <th>RESTARTS</th>
        </tr>
      </thead>
      <tbody>
        ${group.pods.map(
          (p) =>
            html`<tr data-pod=${p.name}>
              <td>${p.name}</td>
              <td class=${p.podReady ? 'ready' : 'notready'}>${p.ready}</td>
              <td>${p.state}</td>
              <td>${p.node || html`<span class="muted">not scheduled</span>`}</td>
              <td>${p.restarts}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function Budget({ d }: { d: WorkloadDetail }) {
  const s = d.summary;
  const b = d.budget;
  const p = d.partition;
  return html`<div class="cards" data-testid="budget">
    <div class="card">
      <div class="sub">rollout</div>
      <div class="big">${s.updated}/${s.target}</div>
      <${Progress} done=${s.updated} total=${s.target} complete=${s.done} />
      <div class="sub">${s.message}</div>
    </div>
    <div class="card">
      <div class="sub">partition</div>
      <div class="big">${p ? String(p.value) : s.partition}</div>
      <div class="sub">
        ${p ? `${p.oldRevisionPods} pod(s) kept at old revisions; ${p.expectedUpdated} expected at the update revision, ${p.updatedNow} now` : ''}
      </div>
    </div>
    ${
      b &&
      html`<div class="card">
          <div class="sub">maxUnavailable</div>
          <div class="big">${Math.min(b.unavailableNow, b.maxUnavailable)} / ${b.maxUnavailable}</div>
          <div class="sub">in use; ${Math.max(0, b.maxUnavailable - b.unavailableNow)} left</div>
        </div>
        <div class="card">
          <div class="sub">maxSurge</div>
          <div class="big">${b.surgeInUse} / ${b.maxSurge}</div>
          <div class="sub">in use</div>
        </div>`
    }
    <div class="card">
      <div class="sub">pods</div>
      <div class="big">${s.ready}/${s.desired}</div>
      <div class="sub">ready / desired${s.paused ? ' — paused' : ''}</div>
    </div>
  </div>`;
}

function PlanForm({ w }: { w: WorkloadSummary }) {
  const [image, setImage] = useState('');
  const [partition, setPartition] = useState('');
  const [answer, setAnswer] = useState<PlanAnswer | undefined>();
  const [error, setError] = useState('');
  const submit = useCallback(
    (e: Event) => {
      e.preventDefault();
      const q = new URLSearchParams();
      if (image) q.append('image', image);
      if (partition) q.set('partition', partition);
      setError('');
      getJSON<PlanAnswer>(`/api/plan/${w.kind}/${encodeURIComponent(w.namespace || '-')}/${encodeURIComponent(w.name)}?${q}`).then(
        setAnswer,
        (err: Error) => setError(err.message),
      );
    },
    [image, partition, w],
  );
  const f = answer?.rollout;
  return html`<h2>Rollout plan of a change</h2>
    <form class="plan" onSubmit=${submit}>
      <label
        >image (container=image, or image)<input
          name="image"
          value=${image}
          placeholder="main=nginx:2.0"
          onInput=${(e: Event) => setImage((e.target as HTMLInputElement).value)}
      /></label>
      <label
        >partition<input
          name="partition"
          value=${partition}
          placeholder=${String(w.partition)}
          onInput=${(e: Event) => setPartition((e.target as HTMLInputElement).value)}
      /></label>
      <button type="submit">Plan</button>
      <span class="muted">the controller's own planner, replayed round by round; nothing is changed</span>
    </form>
    ${error && html`<p class="error">${error}</p>`}
    ${
      f &&
      answer &&
      html`<div data-testid="plan">
        <table>
          <thead>
            <tr>
              <th>ROUND</th>
              <th>PODS UPDATED</th>
              <th>CREATED</th>
              <th>AT UPDATE REVISION</th>
            </tr>
          </thead>
          <tbody>
            ${f.rounds.map(
              (r) =>
                html`<tr data-round=${r.round}>
                  <td>${r.round}</td>
                  <td>${r.moved.map((m) => (m.how === 'in place' ? `${m.pod} (in place)` : m.pod)).join(', ') || '-'}</td>
                  <td>${r.created.length || '-'}</td>
                  <td>${r.updated}/${answer.report.replicas.desired}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        <div class="end" data-testid="plan-end">${endSentence(f, answer.report)}</div>
        <details>
          <summary>next reconcile, in full (kubectl kruise rollout plan)</summary>
          <pre>${answer.text}</pre>
        </details>
      </div>`
    }`;
}

function endSentence(f: RolloutForecast, r: PlanReport): string {
  const after = f.rounds.length ? `after round ${f.rounds.length}` : 'now';
  if (f.end === 'complete') return `complete ${after}: every pod at the update revision`;
  if (f.end === 'partition') return `stops ${after}: partition ${r.partition.value} keeps ${f.kept.join(', ')} at old revisions`;
  if (f.end === 'paused') return `paused ${after}: ${f.kept.join(', ')} wait for a resume`;
  return `stalls ${after}: the controller moves none of ${f.kept.join(', ')}`;
}

function WorkloadPage({ route, version }: { route: string[]; version: number }) {
  const [kind, namespace, name] = route;
  const [d, setD] = useState<WorkloadDetail | undefined>();
  const [error, setError] = useState('');
  useEffect(() => {
    getJSON<WorkloadDetail>(`/api/workloads/${kind}/${namespace}/${name}`).then(
      (x) => {
        setD(x);
        setError('');
      },
      (e: Error) => setError(e.message),
    );
  }, [kind, namespace, name, version]);
  if (error) return html`<p class="error">${error}</p>`;
  if (!d) return html`<p class="muted">loading…</p>`;
  const s = d.summary;
  // The server counts the budget with the kind's planner: a kind with a budget has a rollout plan.
  const planned = d.budget !== undefined;
  return html`<p><a href="#/">← all workloads</a></p>
    <h2 data-testid="title">${s.title} ${s.namespace ? `${s.namespace}/` : ''}${s.name}</h2>
    <div class="muted">update revision ${s.updateRevision || '—'}</div>
    <${Budget} d=${d} />
    <h2>Pods by revision</h2>
    <div class="groups" data-testid="revisions">${d.revisions.map((g) => html`<${RevisionPods} key=${g.revision} group=${g} />`)}</div>
    ${planned && html`<${PlanForm} w=${s} />`}
    <h2>Events</h2>
    <table data-testid="events">
      <thead>
        <tr>
          <th>TYPE</th>
          <th>REASON</th>
          <th>OBJECT</th>
          <th>MESSAGE</th>
        </tr>
      </thead>
      <tbody>
        ${
          d.events.length === 0 &&
          html`<tr>
            <td colspan="4" class="muted">no events</td>
          </tr>`
        }
        ${d.events.map(
          (e) =>
            html`<tr>
              <td>${e.type === 'Warning' ? html`<span class="tag warn">Warning</span>` : e.type}</td>
              <td>${e.reason}</td>
              <td>${e.object}</td>
              <td>${e.message}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

function App() {
  const { version, connected } = useLiveVersion();
  const hash = useHash();
  const route = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  return html`<header>
      <h1><a href="#/">Kruise dashboard</a></h1>
      <span class="muted">read-only</span>
      <span class="live" data-testid="live"
        ><span class=${connected ? 'dot on' : 'dot'}></span>${connected ? 'live' : 'reconnecting…'}</span
      >
    </header>
    <main>
      ${route.length === 3 ? html`<${WorkloadPage} route=${route} version=${version} />` : html`<${WorkloadList} version=${version} />`}
    </main>`;
}

render(html`<${App} />`, document.getElementById('app')!);
