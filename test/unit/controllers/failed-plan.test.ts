import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FailedPlanReporter, type FailedPlanKind, type ReportedObject } from '../../../src/controllers/failed-plan.ts';
import { CloneSets, ImagePullJobs, type ResourceType } from '../../../src/runtime/resources.ts';
import type { Stored } from '../../../src/apis/core-objects.ts';
import { isTerminalError } from '../../../src/runtime/controller.ts';
import { logger } from '../../../src/runtime/log.ts';

interface Obj extends ReportedObject {
  status?: { desired?: number; message?: string; conditions?: Array<{ type?: string; status?: string; message?: string }> };
}

function setup(kind: FailedPlanKind<Obj>) {
  const events: string[] = [];
  const writes: Array<{ type: ResourceType; obj: Stored<Obj> }> = [];
  const reporter = new FailedPlanReporter<Obj>(kind, {
    recorder: {
      event: (_o: unknown, type: string, reason: string, _a: string, note: string) => events.push(`${type} ${reason} ${note}`),
    } as any,
    client: {
      updateStatus: async (type: ResourceType, obj: any) => {
        writes.push({ type, obj });
        return obj;
      },
    } as any,
    log: logger,
    now: () => Date.parse('2026-01-01T00:00:00Z'),
  });
  return { reporter, events, writes };
}

const obj = (status?: Obj['status']): Stored<Obj> => ({ metadata: { namespace: 'ns', name: 'o' }, ...(status ? { status } : {}) });
const boom = (): never => {
  throw new Error('bad value');
};

describe('the failed-plan idiom', () => {
  test('a plan that succeeds is returned and nothing is reported', async () => {
    const { reporter, events, writes } = setup({ type: CloneSets, failureCondition: 'FailedScale' });
    assert.equal(await reporter.orReport(obj(), () => 42), 42);
    assert.deepEqual([events, writes], [[], []]);
  });

  test('a kind with conditions: Warning Event, the condition on the status, then a terminal error', async () => {
    const { reporter, events, writes } = setup({ type: CloneSets, failureCondition: 'FailedScale', emptyStatus: { desired: 0 } });
    await assert.rejects(reporter.orReport(obj({ conditions: [{ type: 'FailedScale', status: 'True', message: 'old' }] }), boom), (err) => {
      assert.ok(isTerminalError(err));
      assert.match((err as Error).message, /cannot plan CloneSet ns\/o/);
      return true;
    });
    assert.deepEqual(events, ['Warning FailedSync failed to reconcile CloneSet: bad value']);
    assert.deepEqual(writes[0]!.obj.status, {
      desired: 0,
      conditions: [
        { type: 'FailedScale', status: 'True', reason: 'FailedSync', message: 'bad value', lastTransitionTime: '2026-01-01T00:00:00Z' },
      ],
    });
  });

  test('a kind without conditions records what its failureStatus says, or only the event', async () => {
    const withMessage = setup({ type: ImagePullJobs, failureStatus: (_o, message) => ({ desired: 0, message }) });
    await assert.rejects(withMessage.reporter.orReport(obj(), boom), isTerminalError);
    assert.deepEqual(withMessage.writes[0]!.obj.status, { desired: 0, message: 'bad value' });

    const eventOnly = setup({ type: ImagePullJobs });
    await assert.rejects(eventOnly.reporter.orReport(obj(), boom), isTerminalError);
    assert.equal(eventOnly.events.length, 1);
    assert.deepEqual(eventOnly.writes, []);
  });

  test('an asynchronous plan that rejects is reported the same way', async () => {
    const { reporter, events } = setup({ type: CloneSets });
    await assert.rejects(
      reporter.orReport(obj(), async () => boom()),
      isTerminalError,
    );
    assert.equal(events.length, 1);
  });
});
