/**
 * RSA keys in .NET's XML form (AsymmetricAlgorithm.ToXmlString / FromXmlString):
 * `<RSAKeyValue><Modulus>…</Modulus><Exponent>…</Exponent>[<P>…<D>…]</RSAKeyValue>`, base64 values.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { CsException, type Rt } from '../runtime/core.js';
import type { CsRsa } from './rsa.js';

const cryptographic = (message: string): CsException => new CsException('CryptographicException', message);

const XML_ORDER = ['Modulus', 'Exponent', 'P', 'Q', 'DP', 'DQ', 'InverseQ', 'D'] as const;
const JWK_NAMES: Record<(typeof XML_ORDER)[number], string> = {
  Modulus: 'n',
  Exponent: 'e',
  P: 'p',
  Q: 'q',
  DP: 'dp',
  DQ: 'dq',
  InverseQ: 'qi',
  D: 'd',
};

/** ExportParameters pads D to the modulus's length and the CRT values to half of it; the XML carries them so. */
export function toXml(rsa: CsRsa, rt: Rt, includePrivate: boolean): string {
  const key = includePrivate ? rsa.privateKey(rt) : rsa.publicKey(rt);
  const jwk = key.export({ format: 'jwk' }) as Record<string, string>;
  const modulusBytes = Buffer.from(jwk.n!, 'base64url').length;
  const parts = XML_ORDER.slice(0, includePrivate ? XML_ORDER.length : 2).map((name) => {
    let value = Buffer.from(jwk[JWK_NAMES[name]]!, 'base64url');
    const width =
      name === 'D' ? modulusBytes : name === 'Modulus' || name === 'Exponent' ? 0 : (modulusBytes + 1) >> 1;
    if (value.length < width) value = Buffer.concat([Buffer.alloc(width - value.length), value]);
    return `<${name}>${value.toString('base64')}</${name}>`;
  });
  return `<RSAKeyValue>${parts.join('')}</RSAKeyValue>`;
}

export function fromXml(rsa: CsRsa, xml: string): null {
  const values: Record<string, string> = {};
  for (const name of XML_ORDER) {
    // indexOf, not a regular expression: a long run of text without the closing tag costs one pass.
    const open = xml.indexOf(`<${name}>`);
    const close = open < 0 ? -1 : xml.indexOf(`</${name}>`, open);
    if (close >= 0) {
      const text = xml.slice(open + name.length + 2, close).replace(/\s/g, '');
      values[JWK_NAMES[name]] = Buffer.from(text, 'base64').toString('base64url');
    }
  }
  if (!/^\s*<RSAKeyValue>[\s\S]*<\/RSAKeyValue>\s*$/.test(xml) || !values.n || !values.e) {
    throw cryptographic("Input string does not contain a valid encoding of the 'RSA' 'Modulus' parameter.");
  }
  try {
    const jwk = { kty: 'RSA', ...values };
    rsa.import(
      values.d ? createPrivateKey({ key: jwk, format: 'jwk' }) : createPublicKey({ key: jwk, format: 'jwk' }),
    );
  } catch {
    throw cryptographic('Bad Data.');
  }
  return null;
}
