// The certificates src/util/pki.ts writes, read back by Node's X509Certificate (and, in the
// integration tests, by etcd, kube-apiserver and the API server's webhook calls).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createCA, issueCert, loadCA, generateKeyPairPem } from '../../../src/util/pki.ts';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/pki/${name}`, import.meta.url), 'utf8');

/** Node does not expose a certificate's extensions: whether its DER holds the expected bytes. */
const has = (cert: X509Certificate, hex: string) => cert.raw.toString('hex').includes(hex);

test('a CA: self-signed, CA:TRUE, certificate signing, its key identifier', async () => {
  const ca = await createCA('test-ca', 10);
  const cert = new X509Certificate(ca.certPem);
  assert.equal(cert.subject, 'CN=test-ca');
  assert.equal(cert.issuer, 'CN=test-ca');
  assert.equal(cert.ca, true);
  assert.ok(cert.verify(cert.publicKey), 'self-signed');
  assert.ok(cert.checkPrivateKey(createPrivateKey(ca.keyPem)));
  // basicConstraints critical CA:TRUE; keyUsage critical digitalSignature|keyCertSign|cRLSign; SKI.
  assert.ok(has(cert, '0603551d130101ff040530030101ff'));
  assert.ok(has(cert, '0603551d0f0101ff040403020186'));
  assert.ok(has(cert, `0603551d0e04160414${ca.keyId.toString('hex')}`));
  const days = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 86_400_000;
  assert.ok(days > 10 && days < 10.01, `valid ${days} days`);
});

test('a leaf: issued by the CA, its names, usages and subject organisations', async () => {
  const ca = await createCA('test-ca');
  const leaf = await issueCert(ca, {
    commonName: 'admin',
    organizations: ['system:masters', 'b'],
    dnsNames: ['localhost', 'svc.ns.svc'],
    ipAddresses: ['127.0.0.1', '::1', 'fd00::10:96:0:1'],
    server: true,
    client: true,
    validDays: 2,
  });
  const cert = new X509Certificate(leaf.certPem);
  const caCert = new X509Certificate(ca.certPem);
  assert.ok(cert.checkIssued(caCert));
  assert.ok(cert.verify(caCert.publicKey));
  assert.equal(cert.ca, false);
  assert.equal(cert.subject, 'CN=admin\nO=system:masters\nO=b');
  assert.equal(
    cert.subjectAltName,
    'DNS:localhost, DNS:svc.ns.svc, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:FD00:0:0:0:10:96:0:1',
  );
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
  assert.equal(cert.checkIP('::1'), '::1');
  assert.equal(cert.checkHost('svc.ns.svc'), 'svc.ns.svc');
  assert.ok(cert.checkPrivateKey(createPrivateKey(leaf.keyPem)));
  assert.equal(cert.validToDate.getTime(), leaf.notAfter.getTime() - (leaf.notAfter.getTime() % 1000));
  // authorityKeyIdentifier = the CA's key identifier; keyUsage critical digitalSignature|keyEncipherment.
  assert.ok(has(cert, `0603551d23041830168014${ca.keyId.toString('hex')}`));
  assert.ok(has(cert, '0603551d0f0101ff0404030205a0'));
  // A serial number is positive and minimally encoded: its first byte is 0x40–0x7f.
  assert.match(cert.serialNumber, /^[4-7][0-9A-F]{31}$/);

  const clientOnly = new X509Certificate((await issueCert(ca, { commonName: 'c', server: false, client: true })).certPem);
  assert.deepEqual(clientOnly.keyUsage, ['1.3.6.1.5.5.7.3.2']);
  assert.equal(clientOnly.subjectAltName, undefined);
});

test('a CA read back from PEM issues leaves as the one that made it', async () => {
  const made = await createCA('webhook-cert-ca');
  const loaded = await loadCA(made.certPem, made.keyPem);
  assert.ok(loaded.subject.equals(made.subject));
  assert.ok(loaded.keyId.equals(made.keyId));
  const leaf = new X509Certificate((await issueCert(loaded, { commonName: 'x', dnsNames: ['x'] })).certPem);
  assert.ok(leaf.verify(new X509Certificate(made.certPem).publicKey));
  await assert.rejects(loadCA(made.certPem, (await createCA('other')).keyPem), /does not match/);
});

test("an RSA CA made elsewhere (OpenKruise's webhook CA is RSA 2048) signs with its key and identifier", async () => {
  const ca = await loadCA(fixture('rsa-ca.crt'), fixture('rsa-ca.key'));
  const caCert = new X509Certificate(fixture('rsa-ca.crt'));
  const leaf = new X509Certificate((await issueCert(ca, { commonName: 'svc', dnsNames: ['svc'] })).certPem);
  assert.ok(leaf.checkIssued(caCert));
  assert.ok(leaf.verify(caCert.publicKey));
  // openssl's key identifier of this CA (its subjectKeyIdentifier extension).
  assert.equal(ca.keyId.toString('hex'), 'd37d5fec3b5637cff2e571124f4bb5e3a5782a53');
  assert.ok(has(leaf, `0603551d23041830168014${ca.keyId.toString('hex')}`));
  assert.ok(has(leaf, '06092a864886f70d01010b0500'), 'sha256WithRSAEncryption');
});

test('a bare key pair', async () => {
  const { privateKeyPem, publicKeyPem } = await generateKeyPairPem();
  assert.match(privateKeyPem, /^-----BEGIN PRIVATE KEY-----/);
  assert.match(publicKeyPem, /^-----BEGIN PUBLIC KEY-----/);
});
