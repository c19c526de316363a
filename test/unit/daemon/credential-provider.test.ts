// Kubelet-style image credential provider plugins for kruise-daemon's pulls (OpenKruise v1.7):
// the config, the kubelet's image matching, the exec protocol (a real plugin script), the cache.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { Command } from 'commander';
import { CredentialProviders, imageMatches, parseCredentialProviderConfig } from '../../../src/daemon/imagepuller/credential-provider.ts';
import { addDaemonFlags, daemonConfig } from '../../../src/daemon/options.ts';
import { logger as root } from '../../../src/runtime/log.ts';
import { FakeClock } from '../../../src/util/clock.ts';

const logger = root.child({}, { level: 'silent' });
const dir = mkdtempSync(path.join(tmpdir(), 'credential-provider-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const CONFIG = `apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
- name: ecr-credential-provider
  matchImages:
  - "*.dkr.ecr.*.amazonaws.com"
  - "*.dkr.ecr.*.amazonaws.com.cn"
  defaultCacheDuration: "12h"
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  args: [get-credentials]
  env:
  - name: AWS_PROFILE
    value: nodes
`;

test('the config: providers with upstream defaults; what the kubelet refuses is refused', () => {
  assert.deepEqual(parseCredentialProviderConfig(CONFIG), [
    {
      name: 'ecr-credential-provider',
      matchImages: ['*.dkr.ecr.*.amazonaws.com', '*.dkr.ecr.*.amazonaws.com.cn'],
      defaultCacheDuration: 12 * 3_600_000,
      apiVersion: 'credentialprovider.kubelet.k8s.io/v1',
      args: ['get-credentials'],
      env: [{ name: 'AWS_PROFILE', value: 'nodes' }],
    },
  ]);
  assert.throws(() => parseCredentialProviderConfig('kind: Pod'), /not a CredentialProviderConfig/);
  assert.throws(() => parseCredentialProviderConfig(CONFIG.replace('ecr-credential-provider', '../x')), /not a file name/);
  assert.throws(
    () => parseCredentialProviderConfig(CONFIG.replace('  defaultCacheDuration: "12h"\n', '')),
    /defaultCacheDuration is required/,
  );
  assert.throws(
    () => parseCredentialProviderConfig(CONFIG.replace('credentialprovider.kubelet.k8s.io/v1', 'credentialprovider.kubelet.k8s.io/v2')),
    /apiVersion must be one of/,
  );
});

test("image matching as the kubelet's: globs per host label, port, path prefix", () => {
  const cases: Array<[string, string, boolean]> = [
    ['*.dkr.ecr.*.amazonaws.com', '123456789012.dkr.ecr.us-east-1.amazonaws.com', true],
    ['*.dkr.ecr.*.amazonaws.com', '123456789012.dkr.ecr.us-east-1.amazonaws.com/app:1.0', true],
    ['*.dkr.ecr.*.amazonaws.com', 'dkr.ecr.us-east-1.amazonaws.com', false],
    ['*.azurecr.io', 'a.b.azurecr.io', false],
    ['registry.io:5000', 'registry.io:5000/x', true],
    ['registry.io:5000', 'registry.io/x', false],
    ['registry.io/team', 'registry.io/team/app:1', true],
    ['registry.io/team', 'registry.io/other/app:1', false],
    ['https://Registry.IO', 'registry.io', true],
    ['reg?stry.io', 'registry.io', true],
  ];
  for (const [pattern, image, want] of cases) assert.equal(imageMatches(pattern, image), want, `${pattern} ~ ${image}`);
});

test('the plugin: asked with a CredentialProviderRequest on stdin (args, env); its matching auths, cached per its key type', async () => {
  const bin = path.join(dir, 'bin');
  const log = path.join(dir, 'calls');
  rmSync(bin, { recursive: true, force: true });
  mkdirSync(bin);
  writeFileSync(
    path.join(bin, 'ecr-credential-provider'),
    `#!/bin/sh
read -r request
echo "$1 $AWS_PROFILE $request" >> ${log}
cat <<'EOF'
{"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1","cacheKeyType":"Registry","cacheDuration":"1m",
 "auth":{"*.dkr.ecr.*.amazonaws.com":{"username":"AWS","password":"token-1"},"other.io":{"username":"x","password":"y"}}}
EOF
`,
  );
  chmodSync(path.join(bin, 'ecr-credential-provider'), 0o755);
  const configFile = path.join(dir, 'CredentialProviderPlugin.yaml');
  writeFileSync(configFile, CONFIG);
  const clock = new FakeClock(0);
  const providers = CredentialProviders.load(configFile, bin, { clock, logger })!;
  const registry = '123456789012.dkr.ecr.us-east-1.amazonaws.com';
  const want = [{ serverAddress: registry, username: 'AWS', password: 'token-1' }];
  assert.deepEqual(await providers.authsFor(registry), want);
  assert.deepEqual(await providers.authsFor('docker.io'), [], 'an image no provider matches runs no plugin');
  assert.deepEqual(await providers.authsFor(registry), want, 'cached');
  const calls = () => (readFileSync(log, 'utf8').trim().split('\n') as string[]).length;
  assert.equal(calls(), 1);
  assert.deepEqual(JSON.parse(readFileSync(log, 'utf8').split(' ').slice(2).join(' ')), {
    apiVersion: 'credentialprovider.kubelet.k8s.io/v1',
    kind: 'CredentialProviderRequest',
    image: registry,
  });
  assert.match(readFileSync(log, 'utf8'), /^get-credentials nodes /);
  await clock.advance(61_000);
  await providers.authsFor(registry);
  assert.equal(calls(), 2, 'asked again once the cache duration is over');
});

test('no config file: no plugins (one log line); a plugin the config names but the bin dir lacks fails the start', () => {
  assert.equal(CredentialProviders.load(path.join(dir, 'absent.yaml'), dir, { clock: new FakeClock(0), logger }), undefined);
  const configFile = path.join(dir, 'missing-plugin.yaml');
  writeFileSync(configFile, CONFIG);
  assert.throws(() => CredentialProviders.load(configFile, path.join(dir, 'nothing'), { clock: new FakeClock(0), logger }), /not found in/);
});

test("--plugin-config-file / --plugin-bin-dir: upstream's flags and defaults", () => {
  const parse = (args: string[]) => {
    const cmd = addDaemonFlags(new Command('daemon').exitOverride().configureOutput({ writeErr: () => {} }));
    cmd.parse(['--node-name', 'n', ...args], { from: 'user' });
    return daemonConfig(cmd.opts(), {});
  };
  assert.deepEqual([parse([]).pluginConfigFile, parse([]).pluginBinDir], ['/kruise/CredentialProviderPlugin.yaml', '/kruise/plugins']);
  const chart = parse([
    '--plugin-config-file=/credential-provider-config/CredentialProviderPlugin.yaml',
    '--plugin-bin-dir=/credential-provider-plugin',
  ]);
  assert.deepEqual(
    [chart.pluginConfigFile, chart.pluginBinDir],
    ['/credential-provider-config/CredentialProviderPlugin.yaml', '/credential-provider-plugin'],
  );
});
