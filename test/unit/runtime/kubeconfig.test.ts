import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { accessFromDefault, accessFromKubeconfigFile, selectContext } from '../../../src/runtime/kubeconfig.ts';

describe('kubeconfig without @kubernetes/client-node', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kruise-kubeconfig-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    return file;
  };

  test('file paths are relative to the kubeconfig; the current context picks cluster and user', () => {
    write('sub/ca.crt', 'CA');
    write('sub/client.crt', 'CERT');
    write('sub/client.key', 'KEY');
    const file = write(
      'sub/config',
      `apiVersion: v1
kind: Config
clusters:
- {name: other, cluster: {server: "https://other:6443"}}
- name: main
  cluster: {server: "https://main:6443", certificate-authority: ca.crt, tls-server-name: kube}
users:
- name: admin
  user: {client-certificate: client.crt, client-key: client.key}
contexts:
- {name: x, context: {cluster: other, user: admin}}
- {name: y, context: {cluster: main, user: admin}}
current-context: y
`,
    );
    const access = accessFromKubeconfigFile(file);
    assert.equal(access.server, 'https://main:6443');
    assert.equal(String(access.tls.ca), 'CA');
    assert.equal(String(access.tls.cert), 'CERT');
    assert.equal(String(access.tls.key), 'KEY');
    assert.equal(access.tls.servername, 'kube');
    assert.equal(access.auth, undefined);
  });

  test('tokenFile is read at request time; basic auth and impersonation become headers', async () => {
    write('token', 'first\n');
    const file = write(
      'token.yaml',
      `clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users:
- {name: t, user: {tokenFile: token, as: someone}}
- {name: b, user: {username: me, password: pw}}
contexts: [{name: t, context: {cluster: c, user: t}}, {name: b, context: {cluster: c, user: b}}]
current-context: t
`,
    );
    const headers = await accessFromKubeconfigFile(file).auth!();
    assert.deepEqual(headers, { authorization: 'Bearer first', 'impersonate-user': 'someone' });
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('current-context: t', 'current-context: b'));
    assert.deepEqual(await accessFromKubeconfigFile(file).auth!(), {
      authorization: `Basic ${Buffer.from('me:pw').toString('base64')}`,
    });
  });

  test('$KUBECONFIG lists files merged in order: the first to name a cluster, user or context wins', () => {
    const a = write('a.yaml', `clusters: [{name: c, cluster: {server: "https://a"}}]\ncurrent-context: ctx\n`);
    const b = write(
      'b.yaml',
      `clusters: [{name: c, cluster: {server: "https://b"}}]
contexts: [{name: ctx, context: {cluster: c}}]
current-context: other
`,
    );
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = [a, path.join(dir, 'missing.yaml'), b].join(path.delimiter);
    try {
      assert.equal(accessFromDefault().server, 'https://a');
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });

  test('selectContext: --context picks another context, with its namespace; an unknown one is named', () => {
    const file = write(
      'contexts.yaml',
      `clusters: [{name: a, cluster: {server: "https://a"}}, {name: b, cluster: {server: "https://b"}}]
contexts: [{name: x, context: {cluster: a}}, {name: y, context: {cluster: b, namespace: prod}}]
current-context: x
`,
    );
    assert.deepEqual([selectContext({ file }).access.server, selectContext({ file }).namespace], ['https://a', undefined]);
    const y = selectContext({ file, context: 'y' });
    assert.deepEqual([y.access.server, y.namespace], ['https://b', 'prod']);
    assert.throws(() => selectContext({ file, context: 'z' }), /^Error: context "z" does not exist$/);
  });

  test('a context that names no known cluster is an error naming the context', () => {
    const file = write('bad.yaml', `contexts: [{name: ctx, context: {cluster: nope}}]\ncurrent-context: ctx\n`);
    assert.throws(() => accessFromKubeconfigFile(file), /context ctx: no cluster/);
  });
});
