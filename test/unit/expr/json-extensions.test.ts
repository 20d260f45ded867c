/**
 * Newtonsoft.Json.Linq.Extensions, the token axes behind them (JToken.Ancestors, JContainer.Descendants) and JRaw.
 * Expected values from Newtonsoft's API reference (https://www.newtonsoft.com/json/help/html/T_Newtonsoft_Json_Linq_Extensions.htm
 * and the member pages): Ancestors are the parent, its parent, … with properties among them; Descendants are every
 * token below in document order, a property's value after the property; Values(key) is `token[key]` of each token,
 * Values() a value itself or a container's children; Properties the properties of each object; JRaw is written as
 * its raw JSON (JRaw page: "Represents a raw JSON string").
 */
import { describe, expect, it } from 'vitest';
import { failure, show, showBlock } from '../../doubles/policy-context.js';

const q = (json: string): string => JSON.stringify(json);
const tree = `JObject.Parse(${q('{"a":{"b":1},"c":[2,3]}')})`;

describe('JToken and JContainer axes', () => {
  it.each([
    [`${tree}.Descendants().Count()`, '8'],
    [`${tree}["a"].Descendants().Count()`, '2'],
    [`${tree}["a"].DescendantsAndSelf().Count()`, '3'],
    [`${tree}["a"]["b"].Ancestors().Count()`, '4'],
    [`${tree}["a"]["b"].Ancestors().First().Type`, 'Property'],
    [`${tree}["a"]["b"].AncestorsAndSelf().Count()`, '5'],
    [`string.Join(",", ${tree}.Descendants().OfType<JProperty>().Select(p => p.Name))`, 'a,b,c'],
    // Value<U>() without a key: the token itself as U (Extensions.Value<U>).
    ['JToken.Parse("5").Value<int>()', '5'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });
});

describe('Newtonsoft.Json.Linq.Extensions', () => {
  const people = `JArray.Parse(${q('[{"name":"Ann","age":30},{"name":"Bob","age":40}]')})`;
  it.each([
    [`${people}.Children().Values<int>("age").Sum()`, '70'],
    [`string.Join(",", ${people}.Children().Values<string>("name"))`, 'Ann,Bob'],
    [`string.Join(",", ${people}.Children<JObject>().Properties().Select(p => p.Name))`, 'name,age,name,age'],
    [`${people}.Children().Children().Count()`, '4'],
    [`${people}.Children().Values().Count()`, '4'],
    [`${people}.Children().Descendants().Count()`, '8'],
    [`${people}.Children().DescendantsAndSelf().Count()`, '10'],
    [`${people}.Children().Children().Ancestors().Count()`, '8'],
    [`${people}.Children().AncestorsAndSelf().Count()`, '4'],
    [`${people}.Children().AsJEnumerable().Count()`, '2'],
    ['new List<JToken> { JToken.Parse("1"), JToken.Parse("[2,3]") }.Values<int>().Sum()', '6'],
    ['Newtonsoft.Json.Linq.Extensions.Value<int>(JToken.Parse("7"))', '7'],
    [`Newtonsoft.Json.Linq.Extensions.Properties(${people}.Children<JObject>()).Count()`, '4'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it('a sequence of XML nodes goes to LINQ to XML, one of tokens to Newtonsoft', () => {
    expect(show('XElement.Parse("<a><b><c/></b></a>").Elements().Descendants().Count()')).toBe('1');
    expect(show(`${people}.Children().Descendants().Count()`)).toBe('8');
    expect(show('new List<JToken>().Descendants().Count()')).toBe('0');
  });

  it('Properties of something that is no object is an InvalidCastException', () => {
    expect(failure(`${people}.Children().Children().Properties().Count()`)).toContain('InvalidCastException');
  });
});

describe('JRaw', () => {
  it.each([
    [`new JObject(new JProperty("r", new JRaw("[1, 2]"))).ToString(Formatting.None)`, '{"r":[1, 2]}'],
    ['new JRaw("{\\"x\\": true}").ToString()', '{"x": true}'],
    ['new JRaw("1").Type', 'Raw'],
    ['new JRaw("1") is JValue', 'True'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it('keeps its text when the token it is in is copied', () => {
    expect(
      showBlock(
        'var a = new JArray(new JRaw("null")); var b = new JArray(a[0]); return b.ToString(Formatting.None);',
      ),
    ).toBe('[null]');
  });
});
