import { describe, expect, it } from 'vitest';
import { header, outbound } from '../../../doubles/policy-services.js';

const json = {
  headers: [['Content-Type', 'application/json']] as [string, string][],
  body: '{"a":1,"list":[{"b":"x&y"},{"b":null}],"1st":true}',
};

describe('json-to-xml', () => {
  // The rendering of true, null and [] follows the public sample of real output at
  // http://dev.fyicenter.com/1000734_json-to-xml_Azure_API_Policy_Statement.html (`<isAlive>True</isAlive>`,
  // `<children />`, `<spouse xsi:nil="true" xmlns:xsi="…" />`, several properties under `<Document>`).
  it('converts a JSON body to XML under <Document>', async () => {
    const { response } = await outbound(
      '<json-to-xml apply="always" consider-accept-header="false" />',
      json,
    );
    expect(response.body.toString()).toBe(
      '<Document><a>1</a><list><b>x&amp;y</b></list><list><b xsi:nil="true" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" /></list><_x0031_st>True</_x0031_st></Document>',
    );
    expect(header(response, 'Content-Type')).toEqual(['application/xml']);
  });

  it('applies content-type-json only to JSON content', async () => {
    const { response } = await outbound(
      '<json-to-xml apply="content-type-json" consider-accept-header="false" />',
      {
        headers: [['Content-Type', 'text/plain']],
        body: '{"a":1}',
      },
    );
    expect(response.body.toString()).toBe('{"a":1}');
  });

  it('considers the Accept header by default', async () => {
    const skip = await outbound('<json-to-xml apply="always" />', json, {
      headers: [['Accept', 'application/json']],
    });
    expect(skip.response.body.toString()).toBe(json.body);
    const convert = await outbound('<json-to-xml apply="always" />', json, {
      headers: [['Accept', 'application/xml']],
    });
    expect(convert.response.body.toString().startsWith('<Document>')).toBe(true);
  });

  it('turns an attribute block into attributes', async () => {
    const { response } = await outbound(
      '<json-to-xml apply="always" consider-accept-header="false" attribute-block-name="#attrs" />',
      {
        body: '{"item":{"#attrs":{"id":"7"},"name":"n"}}',
      },
    );
    expect(response.body.toString()).toBe('<item id="7"><name>n</name></item>');
  });

  it('writes empty arrays and objects as empty elements', async () => {
    const { response } = await outbound('<json-to-xml apply="always" consider-accept-header="false" />', {
      body: '{"children":[],"header":{},"ok":false}',
    });
    expect(response.body.toString()).toBe('<Document><children /><header /><ok>False</ok></Document>');
  });

  describe('the root element', () => {
    const convert = async (body: string) =>
      (
        await outbound('<json-to-xml apply="always" consider-accept-header="false" />', { body })
      ).response.body.toString();

    it('is the only property of the JSON object', async () => {
      expect(await convert('{"course":{"id":7}}')).toBe('<course><id>7</id></course>');
      expect(await convert('{"id":7}')).toBe('<id>7</id>');
    });

    it('is <Document> for several properties, an array property or an empty object', async () => {
      expect(await convert('{"a":1,"b":2}')).toBe('<Document><a>1</a><b>2</b></Document>');
      expect(await convert('{"item":[1,2]}')).toBe('<Document><item>1</item><item>2</item></Document>');
      expect(await convert('{}')).toBe('<Document />');
    });
  });

  describe('namespaces', () => {
    const policy = (attrs: string) =>
      `<json-to-xml apply="always" consider-accept-header="false" ${attrs} />`;

    it('writes declared prefixes and xmlns properties as namespace declarations', async () => {
      const { response } = await outbound(policy('namespace-separator=":" namespace-prefix="xmlns"'), {
        body: '{"s:Envelope":{"xmlns:s":"urn:s","xmlns":"urn:d","s:Body":{"x":1,"s:y":2}}}',
      });
      expect(response.body.toString()).toBe(
        '<s:Envelope xmlns:s="urn:s" xmlns="urn:d"><s:Body><x>1</x><s:y>2</s:y></s:Body></s:Envelope>',
      );
    });

    it('keeps declarations scoped to the element that declares them', async () => {
      const { response } = await outbound(policy('namespace-separator=":" namespace-prefix="xmlns"'), {
        body: '{"r":{"a":{"xmlns:p":"urn:p","p:x":1},"p:y":2}}',
      });
      expect(response.body.toString()).toBe(
        '<r><a xmlns:p="urn:p"><p:x>1</p:x></a><p_x003a_y>2</p_x003a_y></r>',
      );
    });

    it('uses the separator to split names (the default is "_")', async () => {
      const { response } = await outbound(policy('namespace-prefix="xmlns"'), {
        body: '{"p_root":{"xmlns_p":"urn:p","p_child":"v","first_name":"n"}}',
      });
      expect(response.body.toString()).toBe(
        '<p:root xmlns:p="urn:p"><p:child>v</p:child><first_name>n</first_name></p:root>',
      );
    });

    it('treats xmlns properties as plain properties without namespace-prefix', async () => {
      const { response } = await outbound(policy('namespace-separator=":"'), {
        body: '{"s:E":{"xmlns:s":"urn:s"}}',
      });
      expect(response.body.toString()).toBe('<s_x003a_E><xmlns_x003a_s>urn:s</xmlns_x003a_s></s_x003a_E>');
    });
  });
});
