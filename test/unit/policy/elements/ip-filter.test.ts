import { describe, expect, it } from 'vitest';
import { inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

const allow = `<ip-filter action="allow">
  <address>13.66.201.169</address>
  <address-range from="13.66.140.128" to="13.66.140.143" />
  <address>2001:db8::1</address>
  <address-range from="2001:db8:1::" to="2001:db8:1::ffff" />
</ip-filter>`;

const from = async (policy: string, clientIp: string) =>
  (await inbound(policy, { clientIp })).context.lastError?.reason ?? 'ok';

describe('ip-filter', () => {
  it('allows listed addresses and ranges, IPv4 and IPv6', async () => {
    expect(await from(allow, '13.66.201.169')).toBe('ok');
    expect(await from(allow, '13.66.140.130')).toBe('ok');
    expect(await from(allow, '2001:db8::1')).toBe('ok');
    expect(await from(allow, '2001:db8:1::abcd')).toBe('ok');
    expect(await from(allow, '::ffff:13.66.201.169')).toBe('ok');
  });

  it('refuses others with CallerIpNotAllowed and 403', async () => {
    const { outcome, context } = await inbound(allow, { clientIp: '13.66.140.144' });
    expect(outcome.kind === 'respond' && outcome.response.status).toBe(403);
    expect(context.lastError?.reason).toBe('CallerIpNotAllowed');
    expect(await from(allow, '2001:db8:2::1')).toBe('CallerIpNotAllowed');
  });

  it('forbids listed callers with CallerIpBlocked', async () => {
    const forbid =
      '<ip-filter action="forbid"><address-range from="10.0.0.0" to="10.255.255.255" /></ip-filter>';
    expect(await from(forbid, '10.1.2.3')).toBe('CallerIpBlocked');
    expect(await from(forbid, '11.0.0.1')).toBe('ok');
  });

  it('refuses an unparsable caller address', async () => {
    expect(await from(allow, 'not-an-ip')).toBe('FailedToParseCallerIP');
  });

  it('validates literal addresses at load time', () => {
    expect(diagnosticsOf('<ip-filter action="allow"><address>1.2.3</address></ip-filter>')).toEqual([
      'policies/inbound/ip-filter[1]/address[1]: ip-filter/address must be an IP address, got "1.2.3"',
    ]);
    expect(diagnosticsOf('<ip-filter action="allow" />')).toEqual([
      'policies/inbound/ip-filter[1]: ip-filter needs at least one <address> or <address-range>, got none',
    ]);
  });
});
