import { describe, expect, it } from 'vitest';
import { failure, show, showBlock } from '../../doubles/policy-context.js';

describe('Convert, Encoding, Uri, WebUtility', () => {
  it.each([
    ['Convert.ToBase64String(Encoding.UTF8.GetBytes("hello"))', 'aGVsbG8='],
    ['Encoding.UTF8.GetString(Convert.FromBase64String("aGVsbG8="))', 'hello'],
    ['System.Text.Encoding.UTF8.GetBytes("é").Length', '2'],
    ['Encoding.ASCII.GetBytes("é")[0]', '63'],
    ['Encoding.Unicode.GetBytes("a").Length', '2'],
    ['Convert.ToBase64String(Encoding.UTF8.GetBytes("user:pass"))', 'dXNlcjpwYXNz'],
    ['Convert.ToInt32("42")', '42'],
    ['Convert.ToInt32(2.5)', '2'],
    ['Convert.ToInt32(3.5)', '4'],
    ['Convert.ToInt32(true)', '1'],
    ['Convert.ToInt64("9000000000")', '9000000000'],
    ['Convert.ToDouble("1.25")', '1.25'],
    ['Convert.ToBoolean("TRUE")', 'True'],
    ['Convert.ToString(12)', '12'],
    ['Convert.ToString(255, 16)', 'ff'],
    ['Convert.ToString(null) == ""', 'True'],
    ['Convert.ToInt32("ff", 16)', '255'],
    ['Convert.ToHexString(new byte[] { 1, 171 })', '01AB'],
    ['BitConverter.ToString(new byte[] { 1, 171 })', '01-AB'],
    ['BitConverter.ToString(new byte[] { 1, 171 }).Replace("-", "").ToLower()', '01ab'],
    ['Uri.EscapeDataString("a b&c=d/é!")', 'a%20b%26c%3Dd%2F%C3%A9%21'],
    ['Uri.UnescapeDataString("a%20b%2Fc")', 'a b/c'],
    ['System.Net.WebUtility.UrlEncode("a b&c")', 'a+b%26c'],
    ['WebUtility.UrlDecode("a+b%26c")', 'a b&c'],
    ['WebUtility.HtmlEncode("<a href=\\"x\\">&</a>")', '&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;'],
    ['WebUtility.HtmlDecode("&lt;b&gt; &amp; &#65;")', '<b> & A'],
    ['new Uri("https://example.com:8080/a/b?x=1").Host', 'example.com'],
    ['new Uri("https://example.com:8080/a/b?x=1").Port', '8080'],
    ['new Uri("https://example.com/a/b?x=1").AbsolutePath', '/a/b'],
    ['new Uri("https://example.com/a/b?x=1").Query', '?x=1'],
    ['new Uri("https://example.com/a/b?x=1").PathAndQuery', '/a/b?x=1'],
    ['new Uri("https://example.com/a/b?x=1").GetLeftPart(UriPartial.Authority)', 'https://example.com'],
    ['Uri.IsWellFormedUriString("https://x.org/p", UriKind.Absolute)', 'True'],
    ['Uri.IsWellFormedUriString("not a uri", UriKind.Absolute)', 'False'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it.each([
    ['Convert.FromBase64String("not base64!")', 'FormatException'],
    ['Convert.ToInt32("x")', 'FormatException'],
    ['Convert.ToInt32("99999999999")', 'OverflowException'],
    ['int.Parse("99999999999")', 'OverflowException'],
  ])('%s fails with %s', (expr, expected) => {
    expect(failure(expr)).toContain(expected);
  });
});

describe('hashing, HMAC, AES', () => {
  it.each([
    [
      'Convert.ToBase64String(SHA256.Create().ComputeHash(Encoding.UTF8.GetBytes("abc")))',
      'ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=',
    ],
    [
      'BitConverter.ToString(MD5.Create().ComputeHash(Encoding.UTF8.GetBytes("abc"))).Replace("-", "")',
      '900150983CD24FB0D6963F7D28E17F72',
    ],
    [
      'BitConverter.ToString(new SHA1Managed().ComputeHash(Encoding.UTF8.GetBytes("abc"))).Replace("-", "")',
      'A9993E364706816ABA3E25717850C26C9CD0D89D',
    ],
    [
      'Convert.ToBase64String(new HMACSHA256(Encoding.UTF8.GetBytes("key")).ComputeHash(Encoding.UTF8.GetBytes("The quick brown fox jumps over the lazy dog")))',
      '97yD9DBThCSxMpjmqm+xQ+9NWaFJRhdZl0edvC0aPNg=',
    ],
    [
      'BitConverter.ToString(new HMACSHA1(Encoding.UTF8.GetBytes("key")).ComputeHash(Encoding.UTF8.GetBytes("The quick brown fox jumps over the lazy dog"))).Replace("-", "").ToLower()',
      'de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9',
    ],
    ['SHA512.Create().ComputeHash(new byte[0]).Length', '64'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it('round-trips AES with the byte[] Encrypt/Decrypt extensions', () => {
    expect(
      showBlock(
        'var key = Encoding.UTF8.GetBytes("0123456789abcdef0123456789abcdef"); var iv = Encoding.UTF8.GetBytes("abcdef9876543210");' +
          ' var enc = Encoding.UTF8.GetBytes("secret").Encrypt("Aes", key, iv);' +
          ' return Convert.ToBase64String(enc) + "|" + Encoding.UTF8.GetString(enc.Decrypt("Aes", key, iv));',
      ),
    ).toBe('iKeXXgiqEaTXruqOA4m7KA==|secret');
  });
});

describe('Guid, Math, Random', () => {
  it.each([
    ['Guid.NewGuid().ToString().Length', '36'],
    ['Guid.NewGuid().ToString("N").Length', '32'],
    ['Guid.NewGuid() != Guid.NewGuid()', 'True'],
    [
      'Guid.Parse("{0F8FAD5B-D9CB-469F-A165-70867728950E}").ToString()',
      '0f8fad5b-d9cb-469f-a165-70867728950e',
    ],
    ['Guid.Empty.ToString("B")', '{00000000-0000-0000-0000-000000000000}'],
    ['Guid.TryParse("zz", out var g)', 'False'],
    ['Math.Max(3, 7)', '7'],
    ['Math.Min(2.5, 1)', '1'],
    ['Math.Abs(-5)', '5'],
    ['Math.Abs(-2.5)', '2.5'],
    ['Math.Round(2.5)', '2'],
    ['Math.Round(3.5)', '4'],
    ['Math.Round(2.5, MidpointRounding.AwayFromZero)', '3'],
    ['Math.Round(1.2345, 2)', '1.23'],
    ['Math.Floor(-1.5)', '-2'],
    ['Math.Ceiling(1.2)', '2'],
    ['Math.Pow(2, 10)', '1024'],
    ['Math.Sqrt(2)', '1.4142135623730951'],
    ['(int)Math.Floor(7 / 2.0)', '3'],
    ['Math.PI', '3.141592653589793'],
    ['new Random(42).Next(100)', '66'],
    ['new Random(42).Next()', '1434747710'],
    ['new Random(1).Next(10, 20)', '12'],
    ['new Random().Next(5, 6)', '5'],
    ['new Random().NextDouble() < 1.0', 'True'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });
});

describe('Regex', () => {
  it.each([
    ['Regex.IsMatch("abc123", @"\\d+")', 'True'],
    ['Regex.IsMatch("ABC", "abc", RegexOptions.IgnoreCase)', 'True'],
    ['Regex.Match("order-1234-x", @"(\\d+)").Groups[1].Value', '1234'],
    ['Regex.Match("k=v", @"(?<key>\\w+)=(?<val>\\w+)").Groups["val"].Value', 'v'],
    ['Regex.Match("nothing", @"\\d").Success', 'False'],
    ['Regex.Replace("a1b22c", @"\\d+", "#")', 'a#b#c'],
    ['Regex.Replace("john smith", @"(\\w+) (\\w+)", "$2, $1")', 'smith, john'],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: .NET replacement syntax, not a JS template.
    ['Regex.Replace("a-b", "(?<x>a)", "${x}${x}")', 'aa-b'],
    ['Regex.Matches("a1b2c3", @"\\d").Count()', '3'],
    ['string.Join(",", Regex.Matches("a1b2c3", @"\\d").Select(m => m.Value))', '1,2,3'],
    ['string.Join("|", Regex.Split("a1b22c", @"\\d+"))', 'a|b|c'],
    ['new Regex(@"^/api/(\\w+)$").Match("/api/users").Groups[1].Value', 'users'],
    ['Regex.Escape("a.b*c")', 'a\\.b\\*c'],
    ['Regex.Replace("Hello", "L", m => m.Value.ToUpper(), RegexOptions.IgnoreCase)', 'HeLLo'],
  ])('%s → %s', (expr, expected) => {
    if (expected === 'error') {
      expect(failure(expr)).not.toBe('no error');
      return;
    }
    expect(show(expr)).toBe(expected);
  });
});

describe('Jwt and Basic', () => {
  // {"alg":"HS256","typ":"JWT"} . {"sub":"1234567890","name":"John Doe","aud":["a","b"],"exp":1700000000,"iss":"me"}
  const token =
    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiYXVkIjpbImEiLCJiIl0sImV4cCI6MTcwMDAwMDAwMCwiaXNzIjoibWUifQ.sig';
  it.each([
    [`"${token}".AsJwt().Subject`, '1234567890'],
    [`"${token}".AsJwt().Issuer`, 'me'],
    [`"${token}".AsJwt().Algorithm`, 'HS256'],
    [`string.Join(",", "${token}".AsJwt().Audiences)`, 'a,b'],
    [`"${token}".AsJwt().Claims.GetValueOrDefault("name", "?")`, 'John Doe'],
    [`"${token}".AsJwt().Claims["aud"].Length`, '2'],
    [`"${token}".AsJwt().ExpirationTime.Value.ToString("o")`, '2023-11-14T22:13:20.0000000Z'],
    [`"Bearer ${token}".AsJwt()?.Subject`, '1234567890'],
    ['"garbage".AsJwt() == null', 'True'],
    [`"${token}".TryParseJwt(out var jwt) && jwt.Subject == "1234567890"`, 'True'],
    ['"Basic dXNlcjpwYXNz".AsBasic().UserId', 'user'],
    ['"nope".AsBasic() == null', 'True'],
    ['"Basic dXNlcjpwYXNz".TryParseBasic(out var b) ? b.Password : ""', 'pass'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });
});

describe('XML', () => {
  const xml =
    'XDocument.Parse("<root><item id=\\"1\\">one</item><item id=\\"2\\">two</item><x:n xmlns:x=\\"urn:x\\">ns</x:n></root>")';
  it.each([
    [`${xml}.Root.Name.LocalName`, 'root'],
    [`${xml}.Descendants("item").Count()`, '2'],
    [`${xml}.Descendants("item").First().Value`, 'one'],
    [`${xml}.Root.Elements("item").Last().Attribute("id").Value`, '2'],
    [`${xml}.Descendants().Where(e => e.Name.LocalName == "n").First().Value`, 'ns'],
    [`${xml}.Root.Element("item").ToString()`, '<item id="1">one</item>'],
    [`XElement.Parse("<a><b>1</b></a>").ToString()`, '<a>\n  <b>1</b>\n</a>'],
    [`new XElement("p", new XAttribute("k", "v"), "text").ToString()`, '<p k="v">text</p>'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });
});
