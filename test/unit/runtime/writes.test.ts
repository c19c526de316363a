import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../src/apis/core-objects.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import { NodeImages } from '../../../src/runtime/resources.ts';
import { ResourceVersionExpectations } from '../../../src/runtime/expectations.ts';
import { applyWrites, CONFLICT_REQUEUE_MS, writeRaceResult, writeStatus } from '../../../src/runtime/writes.ts';

const statusError = (code: number) =>
  new StatusError({
    status: 'Failure',
    code,
    reason: ({ 409: 'Conflict', 404: 'NotFound' } as Record<number, string>)[code] ?? 'InternalError',
    message: 'x',
  } as never);

describe('write step', () => {
  it('a 409 requeues, a 404 ends the round, anything else is not a race', () => {
    assert.deepEqual(writeRaceResult(statusError(409)), { requeueAfterMs: CONFLICT_REQUEUE_MS });
    assert.deepEqual(writeRaceResult(statusError(404)), {});
    assert.equal(writeRaceResult(statusError(500)), undefined);
    assert.equal(writeRaceResult(new Error('boom')), undefined);
  });

  it('applyWrites passes the result on, turns races into results and rethrows the rest', async () => {
    assert.deepEqual(await applyWrites(async () => ({ requeueAfterMs: 5 })), { requeueAfterMs: 5 });
    assert.deepEqual(
      await applyWrites(async () => {
        throw statusError(409);
      }),
      { requeueAfterMs: CONFLICT_REQUEUE_MS },
    );
    assert.deepEqual(
      await applyWrites(async () => {
        throw statusError(404);
      }),
      {},
    );
    await assert.rejects(
      applyWrites(async () => {
        throw statusError(500);
      }),
      StatusError,
    );
  });

  it('writeStatus writes only a new status and expects the stored resourceVersion', async () => {
    const written: KubeObject[] = [];
    const client = {
      async updateStatus<T>(_t: unknown, o: T) {
        written.push(o as KubeObject);
        return { ...(o as KubeObject), metadata: { ...(o as KubeObject).metadata, resourceVersion: '8' } } as T;
      },
    };
    const obj: KubeObject & { status?: { n: number } } = { metadata: { name: 'a', uid: 'u', resourceVersion: '7' }, status: { n: 1 } };
    assert.deepEqual(await writeStatus(client, NodeImages, obj, undefined), {});
    assert.equal(written.length, 0);
    const rv = new ResourceVersionExpectations();
    const w = await writeStatus(client, NodeImages, obj, { n: 2 }, rv);
    assert.deepEqual((written[0] as typeof obj).status, { n: 2 });
    assert.equal(w.written?.metadata.resourceVersion, '8');
    assert.equal(rv.isSatisfied(obj).satisfied, false);
  });

  it('writeStatus ends the round on a race', async () => {
    const client = {
      async updateStatus(): Promise<never> {
        throw statusError(409);
      },
    };
    assert.deepEqual(await writeStatus(client, NodeImages, { metadata: { name: 'a' } }, {}), {
      ended: { requeueAfterMs: CONFLICT_REQUEUE_MS },
    });
  });
});
