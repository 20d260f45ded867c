import { describe, expect, it } from 'vitest';
import { outbound } from '../../../doubles/policy-services.js';

// Liquid as the set-body page documents it ("Using Liquid templates with set-body"): C# mode (PascalCase filter
// names, .NET date formats), the documented filter list, and the body bound for XML content types.
// https://learn.microsoft.com/azure/api-management/set-body-policy#using-liquid-templates-with-set-body
const render = async (
  template: string,
  body = '{"s":"Ab c","n":1234.5,"a":[3,1,2]}',
  type = 'application/json',
) =>
  (
    await outbound(`<set-body template="liquid">${template}</set-body>`, {
      headers: [['Content-Type', type]],
      body,
    })
  ).response.body.toString();

describe('set-body Liquid: the documented filters, in PascalCase', () => {
  it.each([
    ['{{ body.s | Upcase }}', 'AB C'],
    ['{{ body.s | Downcase }}', 'ab c'],
    ['{{ body.n | AtLeast: 2000 }}', '2000'],
    ['{{ body.n | Plus: 0.5 }}', '1235'],
    ['{{ body.a | Sort | Join: "-" }}', '1-2-3'],
    ['{{ body.s | Replace: "b", "x" }}', 'Ax c'],
    ['{{ body.s | Size }}', '4'],
    ['{{ body.missing | Default: "none" }}', 'none'],
    ['{{ body.n | Currency }}', '¤1,234.50'],
    ['{{ "2024-03-01T10:20:30Z" | Date: "yyyy-MM-dd" }}', '2024-03-01'],
  ])('%s → %s', async (template, expected) => {
    expect(await render(template)).toBe(expected);
  });

  it.each([
    ['{{ body.s | upcase }}', 'Ab c'],
    ['{{ body.n | at_least: 2000 }}', '1234.5'],
  ])(
    'Liquid’s own lower-case name is not a C# mode filter: %s renders its input',
    async (template, expected) => {
      expect(await render(template)).toBe(expected);
    },
  );
});

describe('set-body Liquid: an XML body binds for application/xml, text/xml and +xml', () => {
  const soap =
    '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">' +
    '<soap:Body><GetOrder xmlns="http://tempuri.org/" id="7"><cust>Contoso</cust><item>a</item><item>b</item>' +
    '<note xsi:nil="true"/></GetOrder></soap:Body></soap:Envelope>';

  it.each(['application/xml', 'text/xml', 'application/soap+xml; charset=utf-8'])('%s', async (type) => {
    const out = await render(
      '{{ body.Envelope.Body.GetOrder.cust }}|{{ body.Envelope.Body.GetOrder.id }}|{{ body.Envelope.Body.GetOrder.item | Join: "," }}',
      soap,
      type,
    );
    expect(out).toBe('Contoso|7|a,b');
  });

  it('xsi:nil="true" is blank by default and null with xsi-nil="null"', async () => {
    const test =
      '{% if body.Envelope.Body.GetOrder.note == nil %}null{% else %}[{{ body.Envelope.Body.GetOrder.note }}]{% endif %}';
    expect(await render(test, soap, 'text/xml')).toBe('[]');
    const nulled = (
      await outbound(`<set-body template="liquid" xsi-nil="null">${test}</set-body>`, {
        headers: [['Content-Type', 'text/xml']],
        body: soap,
      })
    ).response.body.toString();
    expect(nulled).toBe('null');
  });

  it('does not bind an XML body with a DOCTYPE, nor one that is not XML', async () => {
    expect(await render('[{{ body.a }}]', '<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>', 'text/xml')).toBe('[]');
    expect(await render('[{{ body.a }}]', '<a><b></a>', 'text/xml')).toBe('[]');
  });
});
