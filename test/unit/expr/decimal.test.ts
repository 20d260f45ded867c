import { describe, expect, it } from 'vitest';
import { failure, show, showBlock } from '../../doubles/policy-context.js';

// System.Decimal as .NET computes it (https://learn.microsoft.com/dotnet/api/system.decimal): exact decimal
// fractions, 28–29 significant digits, the scale kept through arithmetic and ToString, rounding by MidpointRounding.
describe('decimal: a real decimal, not a double', () => {
  it.each([
    ['0.1m + 0.2m', '0.3'],
    ['0.1m + 0.2m == 0.3m', 'True'],
    ['1.0m == 1m', 'True'],
    ['1.50m', '1.50'],
    ['1.10m + 2.205m', '3.305'],
    ['1.5m * 2m', '3.0'],
    ['0.1m * 0.1m', '0.01'],
    ['10m / 4m', '2.5'],
    ['4.00m / 2m', '2.00'],
    ['1m / 8m', '0.125'],
    ['10m / 0.5m', '20'],
    ['1m / 3m', '0.3333333333333333333333333333'],
    ['2m / 3m', '0.6666666666666666666666666667'],
    ['10m / 3m', '3.3333333333333333333333333333'],
    ['1.0000000000000000000000000001m * 1.0000000000000000000000000001m', '1.0000000000000000000000000002'],
    ['1m % 0.3m', '0.1'],
    ['-7.5m % 2m', '-1.5'],
    ['-1.50m', '-1.50'],
    ['decimal.MaxValue', '79228162514264337593543950335'],
    ['decimal.MinValue', '-79228162514264337593543950335'],
    ['decimal.MaxValue - 1m', '79228162514264337593543950334'],
    ['12345678901234567890.123456789m + 0.000000001m', '12345678901234567890.123456790'],
    ['1.5m + 1', '2.5'],
    ['10L * 1.5m', '15.0'],
    ['3m > 2.99m', 'True'],
    ['(decimal)0.1', '0.1'],
    ['(decimal)(1.0 / 3)', '0.333333333333333'],
    ['(decimal)5000000000L', '5000000000'],
    ['(double)0.1m', '0.1'],
    ['(int)1.9m', '1'],
    ['(int)-1.9m', '-1'],
    ['(long)12345678901.99m', '12345678901'],
    ['Convert.ToInt32(2.5m)', '2'],
    ['Convert.ToInt32(3.5m)', '4'],
    ['Convert.ToDecimal("1.50")', '1.50'],
    ['decimal.Parse("1.50")', '1.50'],
    ['decimal.Parse(" -1,234.5 ")', '-1234.5'],
    ['decimal.Parse("0.1234567890123456789012345678")', '0.1234567890123456789012345678'],
    ['decimal.Add(1.1m, 2.2m)', '3.3'],
    ['decimal.Divide(1m, 4m)', '0.25'],
    ['decimal.Negate(1.5m)', '-1.5'],
    ['decimal.Compare(1.0m, 1m)', '0'],
    ['Math.Abs(-2.50m)', '2.50'],
    ['Math.Max(1.5m, 2m)', '2'],
    ['Math.Min(1.50m, 2m)', '1.50'],
    ['Math.Sign(-0.5m)', '-1'],
    ['new[] { 1.10m, 2.20m }.Sum()', '3.30'],
    ['new[] { 1m, 2m }.Average()', '1.5'],
    ['new[] { 1.0m, 1m, 1.00m }.Distinct().Count()', '1'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it.each([
    ['Math.Round(2.5m)', '2'],
    ['Math.Round(3.5m)', '4'],
    ['Math.Round(2.5m, MidpointRounding.AwayFromZero)', '3'],
    ['Math.Round(-2.5m, MidpointRounding.AwayFromZero)', '-3'],
    ['Math.Round(1.2345m, 2)', '1.23'],
    ['Math.Round(1.235m, 2)', '1.24'],
    ['Math.Round(1.245m, 2)', '1.24'],
    ['Math.Round(1.245m, 2, MidpointRounding.AwayFromZero)', '1.25'],
    ['Math.Round(1.20m, 3)', '1.20'],
    ['Math.Round(2.7m, MidpointRounding.ToZero)', '2'],
    ['Math.Round(-2.1m, MidpointRounding.ToNegativeInfinity)', '-3'],
    ['Math.Round(2.1m, MidpointRounding.ToPositiveInfinity)', '3'],
    ['decimal.Round(1.005m, 2)', '1.00'],
    ['Math.Floor(-1.5m)', '-2'],
    ['Math.Ceiling(1.2m)', '2'],
    ['Math.Truncate(-1.7m)', '-1'],
    ['decimal.Floor(2.999m)', '2'],
  ])('rounding: %s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it.each([
    ['12345.678m.ToString("F2")', '12345.68'],
    ['1.005m.ToString("F2")', '1.01'],
    ['1.5m.ToString("F0")', '2'],
    ['(-1.5m).ToString("F0")', '-2'],
    ['12345.678m.ToString("N2")', '12,345.68'],
    ['1234567.5m.ToString("N0")', '1,234,568'],
    ['0.5m.ToString("P0")', '50 %'],
    ['0.12345m.ToString("P1")', '12.3 %'],
    ['1234.5m.ToString("C")', '¤1,234.50'],
    ['1234.5m.ToString("0.00")', '1234.50'],
    ['1234.5m.ToString("#,##0.0")', '1,234.5'],
    ['0.125m.ToString("0.00")', '0.13'],
    ['1.50m.ToString("G")', '1.50'],
    ['1234.5678m.ToString("G6")', '1234.57'],
    ['123.456m.ToString("E2")', '1.23E+002'],
    ['12345678901234567890.12m.ToString("F1")', '12345678901234567890.1'],
    ['$"{1.50m}"', '1.50'],
    ['"total: " + 2.50m', 'total: 2.50'],
  ])('formatting (invariant culture): %s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it('keeps its digits through a typed local and a compound assignment', () => {
    expect(
      showBlock(
        'decimal total = 0m; foreach (var p in new[] { 19.99m, 5.01m }) { total += p; } return total;',
      ),
    ).toBe('25.00');
  });

  it.each([
    ['decimal.MaxValue + 1m', 'OverflowException'],
    ['decimal.MaxValue * 2m', 'OverflowException'],
    ['1m / 0m', 'DivideByZeroException'],
    ['1m % 0m', 'DivideByZeroException'],
    ['(int)3000000000m', 'OverflowException'],
    ['(decimal)double.NaN', 'OverflowException'],
    ['decimal.Parse("1e5")', 'FormatException'],
    ['decimal.Parse("abc")', 'FormatException'],
    ['Math.Round(1.5m, 29)', 'ArgumentOutOfRangeException'],
    ['1.5m.ToString("X")', 'FormatException'],
  ])('%s fails with %s', (expr, expected) => {
    expect(failure(expr)).toContain(expected);
  });
});
