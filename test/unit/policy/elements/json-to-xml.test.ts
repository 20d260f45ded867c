import { describe, expect, it } from 'vitest';
import { header, outbound } from '../../../support/policy/fakes.js';

const json = {
  headers: [['Content-Type', 'application/json']] as [string, string][],
  body: '{"a":1,"list":[{"b":"x&y"},{"b":null}],"1st":true}',
};

describe('json-to-xml', () => {
  it('converts a JSON body to XML under <Document>', async () => {
    const { response } = await outbound(
      '<json-to-xml apply="always" consider-accept-header="false" />',
      json,
    );
    expect(response.body.toString()).toBe(
      '<Document><a>1</a><list><b>x&amp;y</b></list><list><b /></list><_x0031_st>true</_x0031_st></Document>',
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
    expect(response.body.toString()).toBe('<Document><item id="7"><name>n</name></item></Document>');
  });
});
