import { describe, expect, it } from 'vitest';
import { failure, show } from '../../doubles/policy-context.js';

// System.Net.IPAddress, with the members API Management lists. Expected values come from .NET's documentation of
// IPAddress.Parse (https://learn.microsoft.com/dotnet/api/system.net.ipaddress.parse: "65535" → 0.0.255.255,
// "20.2" → 20.0.0.2, "20.65535" → 20.0.255.255, "128.1.2" → 128.1.0.2) and, where the page is silent, from
// dotnet/runtime's parser (IPv4AddressHelper.ParseNonCanonical: octal and hex parts) and formatter
// (IPAddressParser.FormatIPv6Address: RFC 5952 compression of the longest run of two or more zero groups, IPv4 tails).
describe('IPAddress.Parse', () => {
  it.each([
    ['65535', '0.0.255.255'],
    ['20.2', '20.0.0.2'],
    ['20.65535', '20.0.255.255'],
    ['128.1.2', '128.1.0.2'],
    ['1.1.1.1', '1.1.1.1'],
    ['0x7f.1', '127.0.0.1'],
    ['010.0.0.1', '8.0.0.1'],
    ['4294967295', '255.255.255.255'],
    ['::1', '::1'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:db8:0:1:0:0:0:1', '2001:db8:0:1::1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['::ffff:192.168.0.1', '::ffff:192.168.0.1'],
    ['::192.168.0.1', '::192.168.0.1'],
    ['fe80::1%3', 'fe80::1%3'],
    ['[2001:db8::1]:8080', '2001:db8::1'],
    ['::', '::'],
  ])('%s is %s', (text, expected) => {
    expect(show(`IPAddress.Parse("${text}").ToString()`)).toBe(expected);
  });

  it.each([
    '256.1.1.1',
    '1.2.3.4.5',
    '1..2',
    '1.2.3.',
    '08',
    '0x',
    '4294967296',
    ' 1.2.3.4',
    '1.2.3.4 ',
    'abc',
    '1:2',
    ':::',
    '1::2::3',
    '[::1',
    '',
  ])('%j is a FormatException', (text) => {
    expect(failure(`IPAddress.Parse("${text}")`)).toContain('An invalid IP address was specified.');
  });

  it('refuses null with ArgumentNullException', () => {
    expect(failure('IPAddress.Parse(null)')).toContain('ArgumentNullException');
  });
});

describe('IPAddress members', () => {
  it('TryParse sets the out argument, or null', () => {
    expect(show('IPAddress.TryParse("10.0.0.1", out var a) ? a.ToString() : "no"')).toBe('10.0.0.1');
    expect(show('IPAddress.TryParse("10.0.0.256", out var a) ? "yes" : (a == null).ToString()')).toBe('True');
  });

  it('AddressFamily is InterNetwork or InterNetworkV6 (2 and 23, System.Net.Sockets.AddressFamily)', () => {
    expect(show('IPAddress.Parse("10.0.0.1").AddressFamily.ToString()')).toBe('InterNetwork');
    expect(show('IPAddress.Parse("::1").AddressFamily.ToString()')).toBe('InterNetworkV6');
    expect(show('(int)IPAddress.Parse("::1").AddressFamily')).toBe('23');
  });

  it('GetAddressBytes: 4 or 16 bytes in network order', () => {
    expect(show('string.Join(",", IPAddress.Parse("192.168.1.2").GetAddressBytes())')).toBe('192,168,1,2');
    expect(show('IPAddress.Parse("::1").GetAddressBytes().Length')).toBe('16');
  });

  // dotnet/runtime IPAddress.IsLoopback: IPv4 127.0.0.0/8; IPv6 Equals(IPv6Loopback) || Equals(127.0.0.1 mapped).
  it('IsLoopback: 127.0.0.0/8, ::1 and ::ffff:127.0.0.1', () => {
    expect(show('IPAddress.IsLoopback(IPAddress.Parse("127.8.9.10"))')).toBe('True');
    expect(show('IPAddress.IsLoopback(IPAddress.Parse("::1"))')).toBe('True');
    expect(show('IPAddress.IsLoopback(IPAddress.Parse("10.0.0.1"))')).toBe('False');
    expect(show('IPAddress.IsLoopback(IPAddress.Parse("::ffff:127.0.0.1"))')).toBe('True');
    expect(show('IPAddress.IsLoopback(IPAddress.Parse("::ffff:127.0.0.2"))')).toBe('False');
    expect(show('IPAddress.IsLoopback(IPAddress.Parse("::1%2"))')).toBe('False');
  });

  it('Equals compares the address; == is reference equality, as IPAddress does not overload it', () => {
    expect(show('IPAddress.Parse("10.1").Equals(IPAddress.Parse("10.0.0.1"))')).toBe('True');
    expect(show('IPAddress.Parse("10.0.0.1").Equals(IPAddress.Parse("10.0.0.2"))')).toBe('False');
    expect(show('IPAddress.Parse("fe80::1%1").Equals(IPAddress.Parse("fe80::1%2"))')).toBe('False');
    expect(show('IPAddress.Parse("10.0.0.1") == IPAddress.Parse("10.0.0.1")')).toBe('False');
  });

  it("reads the caller's address from the context", () => {
    expect(show('IPAddress.Parse(context.Request.IpAddress).ToString()')).toBe('203.0.113.7');
    expect(show('System.Net.IPAddress.Parse(context.Request.IpAddress).AddressFamily.ToString()')).toBe(
      'InterNetwork',
    );
  });
});
