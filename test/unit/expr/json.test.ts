import { describe, expect, it } from 'vitest';
import { failure, show, showBlock } from '../../doubles/policy-context.js';

const doc =
  'JObject.Parse("{\\"a\\":1,\\"b\\":[1,2.5,\\"x\\",true,null],\\"c\\":{\\"d\\":\\"e\\"},\\"f\\":1.0}")';

describe('Newtonsoft JSON', () => {
  it.each([
    [`${doc}.ToString(Formatting.None)`, '{"a":1,"b":[1,2.5,"x",true,null],"c":{"d":"e"},"f":1.0}'],
    [`${doc}["c"].ToString()`, '{\n  "d": "e"\n}'],
    [`${doc}["b"].ToString()`, '[\n  1,\n  2.5,\n  "x",\n  true,\n  null\n]'],
    [`${doc}["a"]`, '1'],
    [`(int)${doc}["a"] + 1`, '2'],
    [`(string)${doc}["c"]["d"]`, 'e'],
    [`(double)${doc}["b"][1]`, '2.5'],
    [`(bool)${doc}["b"][3]`, 'True'],
    [`(string)${doc}["b"][4] == null`, 'True'],
    [`${doc}["missing"] == null`, 'True'],
    [`(string)${doc}["missing"] == null`, 'True'],
    [`${doc}["b"].Count()`, '5'],
    [`((JArray)${doc}["b"]).Count`, '5'],
    [`${doc}["b"][2].Type`, 'String'],
    [`${doc}["a"].Type == JTokenType.Integer`, 'True'],
    [`${doc}["f"].Type`, 'Float'],
    [`${doc}["f"].ToString()`, '1'],
    [`${doc}.Value<int>("a")`, '1'],
    [`${doc}.Value<string>("a")`, '1'],
    [`${doc}["c"].Value<string>("d")`, 'e'],
    [`${doc}.SelectToken("c.d")`, 'e'],
    [`${doc}.SelectToken("$.b[2]")`, 'x'],
    [`${doc}.SelectToken("$['c']['d']")`, 'e'],
    [`${doc}.SelectToken("nope") == null`, 'True'],
    [`${doc}.ContainsKey("a")`, 'True'],
    [`string.Join(",", ${doc}.Properties().Select(p => p.Name))`, 'a,b,c,f'],
    [`${doc}.Property("a").Value`, '1'],
    [`${doc}["c"]["d"].Path`, 'c.d'],
    [`${doc}["b"][1].Path`, 'b[1]'],
    [
      `new JObject(new JProperty("x", 1), new JProperty("y", "z")).ToString(Formatting.None)`,
      '{"x":1,"y":"z"}',
    ],
    [`new JObject { { "k", "v" } }.ToString(Formatting.None)`, '{"k":"v"}'],
    [`new JArray(1, "two", 3.5, false).ToString(Formatting.None)`, '[1,"two",3.5,false]'],
    [`new JArray(new[] { "a", "b" }).ToString(Formatting.None)`, '["a","b"]'],
    [`new JObject().ToString()`, '{}'],
    [`new JProperty("n", "v").ToString()`, '"n": "v"'],
    [`JToken.Parse("[1,2]").Type`, 'Array'],
    [`JToken.Parse("\\"s\\"").ToString()`, 's'],
    [`JToken.Parse("12345678901234567890").ToString()`, '12345678901234567890'],
    [`JArray.Parse("[3,4]")[1]`, '4'],
    [
      `JsonConvert.SerializeObject(new { a = 1, b = "x", c = true, d = (string)null })`,
      '{"a":1,"b":"x","c":true,"d":null}',
    ],
    [`JsonConvert.SerializeObject(new[] { 1, 2 })`, '[1,2]'],
    [`JsonConvert.SerializeObject("q\\"uote")`, '"q\\"uote"'],
    [
      `JsonConvert.SerializeObject(new Dictionary<string, int> { { "n", 1 } }, Formatting.Indented)`,
      '{\n  "n": 1\n}',
    ],
    [`JsonConvert.SerializeObject(2.0)`, '2.0'],
    [
      `JsonConvert.SerializeObject(new { when = new DateTime(2024, 1, 2, 3, 4, 5, DateTimeKind.Utc) })`,
      '{"when":"2024-01-02T03:04:05Z"}',
    ],
    [`((JObject)JsonConvert.DeserializeObject("{\\"z\\":9}"))["z"]`, '9'],
    [`JsonConvert.DeserializeObject<JObject>("{\\"z\\":9}")["z"]`, '9'],
    [`JsonConvert.DeserializeObject<Dictionary<string, string>>("{\\"k\\":\\"v\\"}")["k"]`, 'v'],
    [`string.Join("|", JsonConvert.DeserializeObject<string[]>("[\\"a\\",\\"b\\"]"))`, 'a|b'],
    [`JObject.FromObject(new { x = 1 }).ToString(Formatting.None)`, '{"x":1}'],
    [`JObject.Parse("{\\"s\\":\\"tab\\\\there\\"}").ToString(Formatting.None)`, '{"s":"tab\\there"}'],
    [`${doc}["c"].ToObject<Dictionary<string, string>>()["d"]`, 'e'],
    [`${doc}["b"][0].ToObject<int>() + 1`, '2'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it.each([
    [
      'var o = new JObject(); o["a"] = 1; o["b"] = "x"; o["a"] = 2; return o.ToString(Formatting.None);',
      '{"a":2,"b":"x"}',
    ],
    [
      'var o = new JObject(); o.Add("a", 1); o.Add(new JProperty("b", new JArray(1, 2))); return o.ToString(Formatting.None);',
      '{"a":1,"b":[1,2]}',
    ],
    [
      'var o = JObject.Parse("{\\"a\\":1,\\"b\\":2}"); o.Remove("a"); return o.ToString(Formatting.None);',
      '{"b":2}',
    ],
    [
      'var o = JObject.Parse("{\\"a\\":1,\\"b\\":2}"); o.Property("b").Remove(); return o.ToString(Formatting.None);',
      '{"a":1}',
    ],
    [
      'var a = new JArray(); a.Add(1); a.Add("s"); a.RemoveAt(0); return a.ToString(Formatting.None);',
      '["s"]',
    ],
    [
      'var o = JObject.Parse("{\\"items\\":[{\\"id\\":1},{\\"id\\":2}]}"); return string.Join(",", o["items"].Select(i => (int)i["id"] * 10));',
      '10,20',
    ],
    [
      'var o = JObject.Parse("{\\"a\\":{\\"b\\":1}}"); var c = o["a"]; o["copy"] = c; c["b"] = 5; return o.ToString(Formatting.None);',
      '{"a":{"b":5},"copy":{"b":1}}',
    ],
    [
      'var o = JObject.Parse("{\\"a\\":1}"); o.Merge(JObject.Parse("{\\"b\\":2}")); return o.ToString(Formatting.None);',
      '{"a":1,"b":2}',
    ],
    [
      'JToken t; var o = JObject.Parse("{\\"a\\":1}"); return o.TryGetValue("a", out t) ? t.ToString() : "none";',
      '1',
    ],
    [
      'var o = JObject.Parse("{\\"a\\":1}"); foreach (var p in o) { return p.Key + "=" + p.Value; } return "";',
      'a=1',
    ],
    [
      'var o = JObject.Parse("{\\"tags\\":[\\"x\\",\\"y\\"]}"); return string.Join("+", o["tags"].Values<string>());',
      'x+y',
    ],
  ])('%s → %s', (block, expected) => {
    expect(showBlock(block)).toBe(expected);
  });

  it.each([
    ['JObject.Parse("{bad")', 'JsonReaderException'],
    ['JObject.Parse("[1]")', 'JsonReaderException'],
    ['JObject.Parse("{\\"a\\":1}")["a"]["x"]', 'InvalidOperationException'],
    ['(int)JObject.Parse("{\\"a\\":null}")["a"]', 'ArgumentException: Can not convert Null to Int32.'],
    ['(string)JObject.Parse("{\\"a\\":{}}")["a"]', 'Can not convert Object to String.'],
    ['(int)JObject.Parse("{\\"a\\":\\"x\\"}")["a"]', 'FormatException'],
    [
      'new JObject(new JProperty("a", 1), new JProperty("a", 2))',
      'Property with the same name already exists',
    ],
    ['JObject.Parse("{}").SelectToken("a]")', 'JsonException: Unexpected character while parsing path: ]'],
  ])('%s fails with %s', (expr, expected) => {
    expect(failure(expr)).toContain(expected);
  });
});
