// X.509 for the local control plane and the webhook server: a CA, and leaf certificates signed by
// it. Keys are ECDSA P-256: small, fast to generate, and accepted by etcd, kube-apiserver and
// Node's TLS. node:crypto generates keys and signs but cannot build a certificate, so the
// certificate's DER is written here: the few fields and extensions a CA and a TLS leaf need, as
// RFC 5280 lays them out. A library did it before (@peculiar/x509, with its DI container and ASN.1
// schemas): ≈21 MiB of RSS and ≈170 ms to load, paid by every manager that creates its webhook
// certificates, for what is a hundred lines of encoding. Node's X509Certificate reads them back.
import { X509Certificate, createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export interface CertAuthority extends KeyPair {
  /** The CA's subject, byte for byte: its leaves' issuer. */
  readonly subject: Buffer;
  /** Its key identifier (SubjectKeyIdentifier): its leaves' AuthorityKeyIdentifier. */
  readonly keyId: Buffer;
  readonly key: KeyObject;
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

// ---------------------------------------------------------------------------------------------
// DER (X.690): tag, length, content.

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const lengthBytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) lengthBytes.unshift(v & 0xff);
  const length = n < 0x80 ? [n] : [0x80 | lengthBytes.length, ...lengthBytes];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}
const sequence = (...content: Buffer[]) => tlv(0x30, ...content);
const set = (...content: Buffer[]) => tlv(0x31, ...content);
const explicit = (n: number, content: Buffer) => tlv(0xa0 | n, content);
const octetString = (b: Buffer) => tlv(0x04, b);
const bitString = (b: Buffer, unusedBits = 0) => tlv(0x03, Buffer.from([unusedBits]), b);
const TRUE = tlv(0x01, Buffer.from([0xff]));
/** A non-negative INTEGER from its big-endian magnitude. */
const integer = (magnitude: Buffer) => tlv(0x02, magnitude[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), magnitude]) : magnitude);

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const bytes = [first! * 40 + second!];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) base128.unshift(0x80 | (v & 0x7f));
    bytes.push(...base128);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050, both to the second in UTC. */
function time(d: Date): Buffer {
  const digits = d
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:T]/g, '');
  const year = d.getUTCFullYear();
  return year >= 1950 && year < 2050 ? tlv(0x17, Buffer.from(digits.slice(2))) : tlv(0x18, Buffer.from(digits));
}

/** KeyUsage / a named BIT STRING: the bits given set, trailing zero bits left out (DER). */
function namedBits(bits: number[]): Buffer {
  const last = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(last / 8) + 1);
  for (const bit of bits) bytes[bit >> 3]! |= 0x80 >> (bit & 7);
  return bitString(bytes, 7 - (last & 7));
}

/** The elements of the DER value whose content is buf[start, end). */
function elements(buf: Buffer, start = 0, end = buf.length): Array<{ tag: number; raw: Buffer; content: Buffer }> {
  const out: Array<{ tag: number; raw: Buffer; content: Buffer }> = [];
  for (let off = start; off < end;) {
    const tag = buf[off]!;
    let length = buf[off + 1]!;
    let header = 2;
    if (length & 0x80) {
      const count = length & 0x7f;
      length = 0;
      for (let i = 0; i < count; i++) length = length * 256 + buf[off + 2 + i]!;
      header += count;
    }
    const next = off + header + length;
    if (next > end) throw new Error('truncated DER');
    out.push({ tag, raw: buf.subarray(off, next), content: buf.subarray(off + header, next) });
    off = next;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Certificates

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
};
const KEY_USAGE = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 };

function name(commonName: string, organizations: string[] = []): Buffer {
  const rdn = (type: string, value: string) => set(sequence(oid(type), tlv(0x0c, Buffer.from(value, 'utf8'))));
  return sequence(rdn(OID.commonName, commonName), ...organizations.map((o) => rdn(OID.organization, o)));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [TRUE] : []), octetString(value));
}

/** RFC 5280 §4.2.1.2 (1): the SHA-1 of the subjectPublicKey bits. */
function keyIdentifier(spki: Buffer): Buffer {
  const [, subjectPublicKey] = elements(elements(spki)[0]!.content);
  return createHash('sha1').update(subjectPublicKey!.content.subarray(1)).digest();
}

function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (!isIPv6(ip)) throw new Error(`not an IP address: ${ip}`);
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = groups(head);
  const t = groups(tail);
  const all = tail === undefined ? h : [...h, ...Array<number>(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

/** 16 random bytes, positive and minimally encoded (its first byte neither 0 nor above 0x7f). */
function serialNumber(): Buffer {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x40;
  return bytes;
}

function signatureAlgorithm(key: KeyObject): Buffer {
  if (key.asymmetricKeyType === 'ec') return sequence(oid(OID.ecdsaWithSHA256));
  if (key.asymmetricKeyType === 'rsa') return sequence(oid(OID.sha256WithRSAEncryption), tlv(0x05));
  throw new Error(`cannot sign certificates with a ${key.asymmetricKeyType} key`);
}

interface CertificateFields {
  subject: Buffer;
  issuer: Buffer;
  publicKey: KeyObject;
  signingKey: KeyObject;
  notAfter: Date;
  extensions: Buffer[];
}

function certificatePem(f: CertificateFields): string {
  const algorithm = signatureAlgorithm(f.signingKey);
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(serialNumber()),
    algorithm,
    f.issuer,
    sequence(time(new Date(Date.now() - 60_000)), time(f.notAfter)),
    f.subject,
    f.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...f.extensions)),
  );
  // ECDSA signatures come DER-encoded (Ecdsa-Sig-Value), as X.509 carries them.
  const der = sequence(tbs, algorithm, bitString(sign('sha256', tbs, f.signingKey)));
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${b64.replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
}

function newKey(): { privateKey: KeyObject; publicKey: KeyObject; keyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, publicKey, keyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() };
}

export async function createCA(commonName: string, validDays = 3650): Promise<CertAuthority> {
  const { privateKey, publicKey, keyPem } = newKey();
  const subject = name(commonName);
  const keyId = keyIdentifier(publicKey.export({ type: 'spki', format: 'der' }));
  const certPem = certificatePem({
    subject,
    issuer: subject,
    publicKey,
    signingKey: privateKey,
    notAfter: new Date(Date.now() + validDays * DAY_MS),
    extensions: [
      extension(OID.basicConstraints, true, sequence(TRUE)),
      extension(OID.keyUsage, true, namedBits([KEY_USAGE.digitalSignature, KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign])),
      extension(OID.subjectKeyIdentifier, false, octetString(keyId)),
    ],
  });
  return { certPem, keyPem, subject, keyId, key: privateKey };
}

/** Re-creates a CertAuthority from PEM files written earlier (e.g. read back from a Secret). */
export async function loadCA(certPem: string, keyPem: string): Promise<CertAuthority> {
  const cert = new X509Certificate(certPem);
  const key = createPrivateKey(keyPem);
  if (!cert.checkPrivateKey(key)) throw new Error('the CA key does not match the CA certificate');
  // TBSCertificate: [0] version, serialNumber, signature, issuer, validity, subject, spki, …, [3] extensions.
  const tbs = elements(elements(elements(cert.raw)[0]!.content)[0]!.content);
  const fields = tbs[0]!.tag === 0xa0 ? tbs.slice(1) : tbs;
  const subject = fields[4]!.raw;
  // Its own key identifier when it carries one (a CA made elsewhere may compute it otherwise).
  let keyId = keyIdentifier(fields[5]!.raw);
  const extensions = tbs.find((e) => e.tag === 0xa3);
  const skiOid = oid(OID.subjectKeyIdentifier);
  for (const ext of extensions ? elements(elements(extensions.content)[0]!.content) : []) {
    const [id, ...rest] = elements(ext.content);
    if (id!.raw.equals(skiOid)) keyId = Buffer.from(elements(rest.at(-1)!.content)[0]!.content);
  }
  return { certPem, keyPem, subject, keyId, key };
}

export async function issueCert(ca: CertAuthority, opts: LeafOptions): Promise<KeyPair & { notAfter: Date }> {
  const { publicKey, keyPem } = newKey();
  const notAfter = new Date(Date.now() + (opts.validDays ?? 365) * DAY_MS);
  const usages = [...((opts.server ?? true) ? [OID.serverAuth] : []), ...(opts.client ? [OID.clientAuth] : [])];
  const altNames = [
    ...(opts.dnsNames ?? []).map((dns) => tlv(0x82, Buffer.from(dns, 'ascii'))),
    ...(opts.ipAddresses ?? []).map((ip) => tlv(0x87, ipBytes(ip))),
  ];
  const certPem = certificatePem({
    subject: name(opts.commonName, opts.organizations),
    issuer: ca.subject,
    publicKey,
    signingKey: ca.key,
    notAfter,
    extensions: [
      extension(OID.basicConstraints, true, sequence()),
      extension(OID.keyUsage, true, namedBits([KEY_USAGE.digitalSignature, KEY_USAGE.keyEncipherment])),
      ...(usages.length ? [extension(OID.extKeyUsage, false, sequence(...usages.map(oid)))] : []),
      extension(OID.authorityKeyIdentifier, false, sequence(tlv(0x80, ca.keyId))),
      ...(altNames.length ? [extension(OID.subjectAltName, false, sequence(...altNames))] : []),
    ],
  });
  return { certPem, keyPem, notAfter };
}

/** A bare key pair in PEM (e.g. the service-account token signing key). */
export async function generateKeyPairPem(): Promise<{ privateKeyPem: string; publicKeyPem: string }> {
  const { publicKey, keyPem } = newKey();
  return { privateKeyPem: keyPem, publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString() };
}
