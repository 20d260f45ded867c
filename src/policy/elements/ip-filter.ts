import ipaddr from 'ipaddr.js';
import { defineElement } from '../element.js';
import type { Getter } from '../node.js';
import { PolicyError } from '../runtime.js';
import { ALL_SCOPES, elements, oneOf, str, text } from '../schema.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Parses an address; IPv4-mapped IPv6 (::ffff:1.2.3.4) is treated as the IPv4 address it carries. */
function parse(text: string): Address | undefined {
  const t = text.trim();
  // Strict forms only: ipaddr.isValid also takes legacy shorthands such as "1.2.3".
  if (!ipaddr.IPv4.isValidFourPartDecimal(t) && !ipaddr.IPv6.isValid(t)) return undefined;
  return ipaddr.process(t);
}

function bytes(a: Address): number[] {
  return a.toByteArray();
}

function compare(a: Address, b: Address): number {
  const x = bytes(a);
  const y = bytes(b);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

type Matcher = (ip: Address, run: Parameters<Getter<string>>[0]) => boolean;

/** Allows or forbids callers by address and address range, IPv4 and IPv6. */
export const ipFilter = defineElement({
  name: 'ip-filter',
  summary: 'Allows or forbids callers by IP address or range.',
  sections: ['inbound'],
  scopes: ALL_SCOPES,
  attributes: { action: oneOf(['allow', 'forbid'], { required: true }) },
  content: elements(
    { name: 'address', content: text(true, true) },
    {
      name: 'address-range',
      attributes: { from: str({ required: true }), to: str({ required: true }) },
    },
  ),
  compile(node, c) {
    if (node.children.length === 0) {
      c.error(node, 'children', 'ip-filter needs at least one <address> or <address-range>, got none');
    }
    const matchers: Matcher[] = [];
    node.eachChild({
      address: (child) => {
        const literal = child.content?.kind === 'literal' ? String(child.content.value) : undefined;
        if (literal !== undefined && parse(literal) === undefined) {
          c.error(child, 'children', `ip-filter/address must be an IP address, got "${literal}"`);
        }
        const value = child.text();
        matchers.push((ip, run) => {
          const a = parse(value(run));
          return a !== undefined && a.kind() === ip.kind() && compare(a, ip) === 0;
        });
      },
      'address-range': (child) => {
        for (const attr of ['from', 'to'] as const) {
          const v = child.literal(attr);
          if (typeof v === 'string' && parse(v) === undefined) {
            c.error(child, 'attribute', `address-range/@${attr} must be an IP address, got "${v}"`);
          }
        }
        const from = child.getter('from');
        const to = child.getter('to');
        matchers.push((ip, run) => {
          const lo = parse(from(run));
          const hi = parse(to(run));
          if (lo === undefined || hi === undefined || lo.kind() !== ip.kind() || hi.kind() !== ip.kind())
            return false;
          return compare(lo, ip) <= 0 && compare(ip, hi) <= 0;
        });
      },
    });
    const action = node.getter('action');
    // LastError.Message as in the predefined-errors table of "Error handling in API Management policies"; the
    // client's body says only "Forbidden", as API Management's does.
    return (run) => {
      const caller = parse(run.context.request.ipAddress);
      if (caller === undefined) {
        throw new PolicyError(
          'FailedToParseCallerIP',
          'Failed to establish IP address for the caller. Access denied.',
          403,
          'Forbidden',
        );
      }
      const listed = matchers.some((m) => m(caller, run));
      if (action(run) === 'allow') {
        if (listed) return 'next';
        throw new PolicyError(
          'CallerIpNotAllowed',
          `Caller IP address ${caller.toString()} is not allowed. Access denied.`,
          403,
          'Forbidden',
        );
      }
      if (!listed) return 'next';
      throw new PolicyError(
        'CallerIpBlocked',
        // API Management's text names no address here (unlike CallerIpNotAllowed): policies compare it as is.
        'Caller IP address is blocked. Access denied.',
        403,
        'Forbidden',
      );
    };
  },
});
