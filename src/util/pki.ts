// X.509 for the local control plane and the webhook server: a CA, and leaf certificates signed by
// it. node:crypto cannot sign certificates, so @peculiar/x509 does that over WebCrypto. Keys are
// ECDSA P-256: small, fast to generate, and accepted by etcd, kube-apiserver and Node's TLS.
// @peculiar/x509 (with its DI container and ASN.1 schemas, ≈21 MiB of RSS and ≈170 ms to load) is
// imported on the first certificate signed or CA loaded: a manager restarting on the webhook
// certificates already in its Secret never needs it.
import { webcrypto, createPrivateKey, createPublicKey, randomBytes, KeyObject } from 'node:crypto';
import type * as X509 from '@peculiar/x509';

let x509Module: Promise<typeof X509> | undefined;
function loadX509(): Promise<typeof X509> {
  return (x509Module ??= (async () => {
    await import('reflect-metadata'); // @peculiar/x509's DI container needs it loaded first
    const x509 = await import('@peculiar/x509');
    // Node's webcrypto implements the Web Crypto API; its TS type is node's, @peculiar/x509 names the DOM's.
    x509.cryptoProvider.set(webcrypto as unknown as Crypto);
    return x509;
  })());
}

const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export interface CertAuthority extends KeyPair {
  readonly cert: X509.X509Certificate;
  readonly keys: CryptoKeyPair;
}

export interface LeafOptions {
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  server?: boolean;
  client?: boolean;
  validDays?: number;
}

const DAY_MS = 86_400_000;

function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] &= 0x7f; // serial numbers must be positive
  return bytes.toString('hex');
}

function subject(cn: string, orgs: string[] = []): string {
  const esc = (v: string) => v.replace(/([,+="\\<>;])/g, '\\$1');
  return [`CN=${esc(cn)}`, ...orgs.map((o) => `O=${esc(o)}`)].join(', ');
}

function exportKeyPem(key: CryptoKey): string {
  return KeyObject.from(key).export({ format: 'pem', type: 'pkcs8' }).toString();
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
}

export async function createCA(commonName: string, validDays = 3650): Promise<CertAuthority> {
  const x509 = await loadX509();
  const keys = await generateKeys();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: subject(commonName),
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + validDays * DAY_MS),
    keys,
    signingAlgorithm: algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, keys, certPem: cert.toString('pem') + '\n', keyPem: exportKeyPem(keys.privateKey) };
}

/** Re-creates a CertAuthority from PEM files written earlier (e.g. read back from a Secret). */
export async function loadCA(certPem: string, keyPem: string): Promise<CertAuthority> {
  const x509 = await loadX509();
  const cert = new x509.X509Certificate(certPem);
  const der = createPrivateKey(keyPem).export({ format: 'der', type: 'pkcs8' });
  const privateKey = await webcrypto.subtle.importKey('pkcs8', der, algorithm, true, ['sign']);
  const publicKey = await cert.publicKey.export(algorithm, ['verify']);
  return { cert, keys: { privateKey, publicKey } as CryptoKeyPair, certPem, keyPem };
}

export async function issueCert(ca: CertAuthority, opts: LeafOptions): Promise<KeyPair & { notAfter: Date }> {
  const x509 = await loadX509();
  const keys = await generateKeys();
  const now = Date.now();
  const usages: string[] = [];
  if (opts.server ?? true) usages.push(x509.ExtendedKeyUsage.serverAuth);
  if (opts.client) usages.push(x509.ExtendedKeyUsage.clientAuth);
  const names: X509.JsonGeneralName[] = [
    ...(opts.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(opts.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const notAfter = new Date(now + (opts.validDays ?? 365) * DAY_MS);
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(usages),
    await x509.AuthorityKeyIdentifierExtension.create(ca.keys.publicKey),
  ];
  if (names.length) extensions.push(new x509.SubjectAlternativeNameExtension(names));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: subject(opts.commonName, opts.organizations),
    issuer: ca.cert.subject,
    notBefore: new Date(now - 60_000),
    notAfter,
    signingKey: ca.keys.privateKey,
    publicKey: keys.publicKey,
    signingAlgorithm: algorithm,
    extensions,
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: exportKeyPem(keys.privateKey), notAfter };
}

/** A bare key pair in PEM (e.g. the service-account token signing key). */
export async function generateKeyPairPem(): Promise<{ privateKeyPem: string; publicKeyPem: string }> {
  const keys = await generateKeys();
  const privateKeyPem = exportKeyPem(keys.privateKey);
  const publicKeyPem = createPublicKey(privateKeyPem).export({ format: 'pem', type: 'spki' }).toString();
  return { privateKeyPem, publicKeyPem };
}
