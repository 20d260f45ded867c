/**
 * What .NET's certificate members read that Node's X509Certificate does not expose — the version, the signature
 * algorithm, the serial number's bytes, the public key's algorithm, parameters and bits — read from the DER once
 * per certificate (RFC 5280 §4.1) and kept beside it.
 */
import { type KeyObject, X509Certificate } from 'node:crypto';
import type { CertificateModel } from '../context.js';
import { CsException } from '../runtime/core.js';

/** PublicKey: a SubjectPublicKeyInfo, from a certificate or from its bytes. */
export class CsPublicKey {
  readonly algorithm: string;
  constructor(readonly spki: Buffer) {
    const [algorithm] = children(element(spki, 0));
    const [oid] = algorithm ? children(algorithm) : [];
    if (!oid) throw corrupted();
    this.algorithm = oidText(oid.content);
  }
}

/** The private keys of the certificates RSACertificateExtensions.CopyWithPrivateKey made (none come from outside). */
export const PRIVATE_KEYS = new WeakMap<CertificateModel, KeyObject>();

export interface CertificateFields {
  readonly node: X509Certificate;
  readonly version: number;
  readonly serial: Buffer;
  readonly signatureAlgorithm: string;
  readonly keyAlgorithm: string;
  /** The algorithm's parameters as DER (05 00, NULL, for RSA). */
  readonly keyParameters: Buffer;
  /** The subjectPublicKey BIT STRING's bits: for RSA, the PKCS#1 RSAPublicKey. */
  readonly publicKey: Buffer;
  /** The whole SubjectPublicKeyInfo. */
  readonly spki: Buffer;
}

interface Element {
  readonly tag: number;
  /** The whole element, header included. */
  readonly all: Buffer;
  readonly content: Buffer;
}

const corrupted = (): CsException => new CsException('CryptographicException', 'ASN1 corrupted data.');

function element(der: Buffer, at: number): Element {
  if (at + 2 > der.length) throw corrupted();
  const tag = der[at]!;
  let length = der[at + 1]!;
  let header = 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || at + 2 + count > der.length) throw corrupted();
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + der[at + 2 + i]!;
    header += count;
  }
  const end = at + header + length;
  if (end > der.length) throw corrupted();
  return { tag, all: der.subarray(at, end), content: der.subarray(at + header, end) };
}

/** The length of the DER element at the start of `der`: what .NET's `out int bytesRead` reports. */
export const derElementLength = (der: Buffer): number => element(der, 0).all.length;

function children(parent: Element): Element[] {
  const out: Element[] = [];
  for (let at = 0; at < parent.content.length; ) {
    const child = element(parent.content, at);
    out.push(child);
    at += child.all.length;
  }
  return out;
}

/** An OBJECT IDENTIFIER's content as dotted text. */
export function oidText(content: Buffer): string {
  const arcs: number[] = [];
  let value = 0;
  for (const byte of content) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      arcs.push(value);
      value = 0;
    }
  }
  const first = arcs.shift() ?? 0;
  const head = first < 80 ? [Math.floor(first / 40), first % 40] : [2, first - 80];
  return [...head, ...arcs].join('.');
}

const FIELDS = new WeakMap<CertificateModel, CertificateFields>();

/** The certificate's fields; a certificate whose bytes do not parse is a CryptographicException, as in .NET. */
export function certificateFields(c: CertificateModel): CertificateFields {
  const known = FIELDS.get(c);
  if (known) return known;
  let node: X509Certificate;
  try {
    node = new X509Certificate(c.raw.length > 0 ? c.raw : c.pem);
  } catch {
    try {
      node = new X509Certificate(c.pem);
    } catch {
      throw new CsException('CryptographicException', 'The certificate could not be read.');
    }
  }
  const certificate = element(node.raw, 0);
  const [tbs, signature] = children(certificate);
  if (!tbs || !signature) throw corrupted();
  const fields = children(tbs);
  // version [0] EXPLICIT INTEGER DEFAULT v1
  const versioned = fields[0]?.tag === 0xa0;
  const version = versioned ? children(fields[0]!)[0]!.content.readUIntBE(0, 1) + 1 : 1;
  const rest = versioned ? fields.slice(1) : fields;
  const [serial, , , , , spki] = rest;
  if (!serial || !spki) throw corrupted();
  const [keyAlgorithm, keyBits] = children(spki);
  const [keyOid, ...keyParameters] = children(keyAlgorithm!);
  const result: CertificateFields = {
    node,
    version,
    serial: Buffer.from(serial.content),
    signatureAlgorithm: oidText(children(signature)[0]!.content),
    keyAlgorithm: oidText(keyOid!.content),
    keyParameters: Buffer.concat(keyParameters.map((p) => p.all)),
    publicKey: Buffer.from(keyBits!.content.subarray(1)),
    spki: Buffer.from(spki.all),
  };
  FIELDS.set(c, result);
  return result;
}
