import { describe, expect, it } from 'vitest';
import { liquidDate } from '../../../../src/policy/shared/liquid-date.js';
import { outbound } from '../../../doubles/policy-services.js';

describe('Liquid Date filter (C# mode)', () => {
  it("formats with .NET custom formats: the docs' example", () => {
    expect(liquidDate('2017-03-01T10:30:05Z', 'yyyyMMddTHH:mm:ssZ')).toBe('20170301T10:30:05Z');
    expect(liquidDate('2017-03-01T10:30:05+02:00', 'dd/MM/yyyy HH:mm zzz')).toBe('01/03/2017 10:30 +02:00');
    expect(liquidDate('2017-03-01', "dddd, MMMM d 'at' h tt")).toBe('Wednesday, March 1 at 12 AM');
  });

  it('takes .NET standard formats', () => {
    expect(liquidDate('2017-03-01T10:30:05Z', 's')).toBe('2017-03-01T10:30:05');
    expect(liquidDate('2017-03-01T10:30:05Z', 'o')).toBe('2017-03-01T10:30:05.0000000+00:00');
  });

  it('reads a number as Unix seconds', () => {
    expect(liquidDate(1488364205, 'yyyy-MM-dd HH:mm:ss')).toBe('2017-03-01 10:30:05');
  });

  it('gives back a value that is no date, and the value when there is no format', () => {
    expect(liquidDate('soon', 'yyyy')).toBe('soon');
    expect(liquidDate('2017-03-01T10:30:05Z', '')).toBe('2017-03-01T10:30:05Z');
    expect(liquidDate(null, 'yyyy')).toBeNull();
  });

  it('formats now', () => {
    expect(liquidDate('now', 'yyyy')).toBe(String(new Date().getUTCFullYear()));
  });

  it('is the Date filter of set-body template="liquid"', async () => {
    const { response } = await outbound(
      '<set-body template="liquid">{{body.foo.startDateTime| Date:"yyyyMMddTHH:mm:ssZ"}}</set-body>',
      {
        headers: [['Content-Type', 'application/json']],
        body: '{"foo":{"startDateTime":"2017-03-01T10:30:05Z"}}',
      },
    );
    expect(response.body.toString()).toBe('20170301T10:30:05Z');
  });
});
