import { describe, expect, it } from 'vitest';
import {
  decodeEntities,
  findExpressionEnd,
  maskExpressions,
  ScanError,
} from '../../../src/policy/scanner.js';

const end = (text: string) => findExpressionEnd(text, 0);

describe('findExpressionEnd', () => {
  it('finds the bracket closing @( … ) across nested calls', () => {
    const t = '@(a.b(c(d), e[1]).f())';
    expect(end(`${t} tail`)).toBe(t.length);
  });

  it('finds the brace closing a statement block', () => {
    const t = '@{ var x = new JObject(); if (a) { return "}"; } return x; }';
    expect(end(`${t}"`)).toBe(t.length);
  });

  it('ignores brackets inside regular strings with escapes', () => {
    const t = '@(x.Replace("\\")(", ")"))';
    expect(end(t)).toBe(t.length);
  });

  it('handles verbatim strings with doubled quotes', () => {
    const t = '@(@"C:\\x"")" + y)';
    expect(end(t)).toBe(t.length);
  });

  it('handles interpolated strings with holes, nested strings and escaped braces', () => {
    const t = '@($"a{{b}} {ctx.Variables["k)"]} {(x ? "(" : ")")}")';
    expect(end(t)).toBe(t.length);
  });

  it('handles interpolated verbatim strings in both prefix orders', () => {
    expect(end('@($@"a""{x}"")")')).toBe('@($@"a""{x}"")")'.length);
    expect(end('@(@$"{x})")')).toBe('@(@$"{x})")'.length);
  });

  it('handles char literals including an escaped quote and a bracket', () => {
    const t = "@(s.Split(')').Concat(s.Split('\\'')))";
    expect(end(t)).toBe(t.length);
  });

  it('skips comments', () => {
    const t = '@{\n// a ) comment\n/* and } another */ return 1; }';
    expect(end(t)).toBe(t.length);
  });

  it('reads XML entities as the characters they encode', () => {
    const t = '@(x == &quot;)&quot; &amp;&amp; y &lt; 2)';
    expect(end(`${t}"`)).toBe(t.length);
  });

  it('reports an unterminated string at the string start', () => {
    try {
      end('@(a + "abc)');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ScanError);
      expect((err as ScanError).offset).toBe(6);
      expect((err as ScanError).message).toBe('unterminated string literal in expression');
    }
  });

  it('reports an unbalanced bracket where it is found', () => {
    expect(() => end('@(a]')).toThrow(/unbalanced "]" in expression \(expected "\)"\)/);
    try {
      end('@(a]');
    } catch (err) {
      expect((err as ScanError).offset).toBe(3);
    }
  });

  it('reports an expression that never closes', () => {
    expect(() => end('@{ return 1;')).toThrow('unterminated expression: no "}" closes it');
  });
});

describe('maskExpressions', () => {
  it('masks an attribute expression holding raw quotes, < and && without moving offsets', () => {
    const xml = '<when condition="@(a.Get("x") < 3 && b)">\n</when>';
    const { masked, spans } = maskExpressions(xml);
    expect(masked.length).toBe(xml.length);
    expect(spans).toEqual([{ start: 17, end: 39 }]);
    expect(masked).toBe(`<when condition="@${'_'.repeat(21)}">\n</when>`);
  });

  it('keeps newlines inside masked blocks so line numbers stay right', () => {
    const xml = '<set-body>@{\n  return "<x>";\n}</set-body>';
    const { masked } = maskExpressions(xml);
    expect(masked.split('\n').length).toBe(3);
    expect(masked).not.toContain('<x>');
  });

  it('only treats @( at the start of a value or text as an expression', () => {
    const xml = '<a v="mail@(x" w=\'@(1)\'>see @(this)</a>';
    const { spans } = maskExpressions(xml);
    expect(spans.map((s) => xml.slice(s.start, s.end))).toEqual(['@(1)']);
  });

  it('skips comments and CDATA', () => {
    const xml = '<a><!-- @( unbalanced --><![CDATA[@{ ( ]]>  @(x)</a>';
    const { spans } = maskExpressions(xml);
    expect(spans.map((s) => xml.slice(s.start, s.end))).toEqual(['@(x)']);
  });

  it('finds an expression after leading whitespace in text', () => {
    const xml = '<value>\n   @(context.Request.Method)\n</value>';
    const { spans } = maskExpressions(xml);
    expect(xml.slice(spans[0]!.start, spans[0]!.end)).toBe('@(context.Request.Method)');
  });
});

describe('decodeEntities', () => {
  it('decodes the predefined entities and character references, leaving others', () => {
    expect(decodeEntities('&lt;a&gt; &amp;&amp; &quot;&apos; &#65;&#x42; &nbsp; &&')).toBe(
      `<a> && "' AB &nbsp; &&`,
    );
  });
});
