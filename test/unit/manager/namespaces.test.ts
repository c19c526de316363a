// The namespaces the manager makes sure of at start-up (kruise-system, kruise-daemon-config).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { ensureNamespace } from '../../../src/manager/manager.ts';
import type { KubeClient } from '../../../src/runtime/client.ts';
import { StatusError } from '../../../src/runtime/errors.ts';

const forbidden = () =>
  new StatusError({ code: 403, reason: 'Forbidden', message: 'namespaces is forbidden: User "u" cannot create resource "namespaces"' });
const exists = () => new StatusError({ code: 409, reason: 'AlreadyExists', message: 'namespaces "x" already exists' });
const notFound = () => new StatusError({ code: 404, reason: 'NotFound', message: 'namespaces "x" not found' });

function fixture(create: () => unknown, get: () => unknown) {
  const lines: Array<{ level: number; msg: string }> = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  const client = {
    create: async () => create(),
    get: async () => get(),
  } as unknown as KubeClient;
  return { client, log, warnings: () => lines.filter((l) => l.level >= 40).map((l) => l.msg) };
}

const throws = (make: () => Error) => () => {
  throw make();
};

test('a missing namespace is created; an existing one is left alone', async () => {
  for (const create of [() => ({}), throws(exists)]) {
    const f = fixture(create, throws(notFound));
    await ensureNamespace(f.client, 'kruise-daemon-config', f.log, { required: false });
    assert.deepEqual(f.warnings(), []);
  }
});

test('without the right to create namespaces, an existing one is enough, and no create is tried', async () => {
  const f = fixture(
    () => assert.fail('create must not be called for an existing namespace'),
    () => ({ metadata: { name: 'kruise-daemon-config' } }),
  );
  await ensureNamespace(f.client, 'kruise-daemon-config', f.log, { required: true });
  assert.deepEqual(f.warnings(), []);
});

test('a missing namespace that cannot be created fails start-up only when required, and is logged otherwise', async () => {
  const f = fixture(throws(forbidden), throws(notFound));
  await ensureNamespace(f.client, 'kruise-daemon-config', f.log, { required: false });
  assert.equal(f.warnings().length, 1);
  assert.match(
    f.warnings()[0]!,
    /namespace kruise-daemon-config does not exist and could not be created: namespaces is forbidden.*create it as the upstream installation does/,
  );
  await assert.rejects(
    ensureNamespace(f.client, 'kruise-system', f.log, { required: true }),
    /namespace kruise-system does not exist and could not be created/,
  );
});
