import { describe, expect, it } from 'vitest';
import { header, outbound } from '../../../doubles/policy-services.js';

const xml = {
  headers: [['Content-Type', 'application/xml']] as [string, string][],
  body: '<root a="1"><item>x</item><item>y</item><one>z</one></root>',
};

describe('xml-to-json', () => {
  it('converts javascript-friendly: attributes as properties, repeated elements as arrays', async () => {
    const { response } = await outbound(
      '<xml-to-json kind="javascript-friendly" apply="always" consider-accept-header="false" />',
      xml,
    );
    expect(JSON.parse(response.body.toString())).toEqual({ root: { a: '1', item: ['x', 'y'], one: 'z' } });
    expect(header(response, 'Content-Type')).toEqual(['application/json']);
  });

  it('converts direct: attributes keep their @ marker', async () => {
    const { response } = await outbound(
      '<xml-to-json kind="direct" apply="always" consider-accept-header="false" />',
      xml,
    );
    expect(JSON.parse(response.body.toString())).toEqual({ root: { '@a': '1', item: ['x', 'y'], one: 'z' } });
  });

  it('makes every child an array with always-array-child-elements', async () => {
    const { response } = await outbound(
      '<xml-to-json kind="javascript-friendly" apply="always" consider-accept-header="false" always-array-child-elements="true" />',
      xml,
    );
    expect(JSON.parse(response.body.toString())).toEqual({ root: { a: '1', item: ['x', 'y'], one: ['z'] } });
  });

  it('applies content-type-xml only to XML content', async () => {
    const { response } = await outbound(
      '<xml-to-json kind="direct" apply="content-type-xml" consider-accept-header="false" />',
      {
        headers: [['Content-Type', 'text/plain']],
        body: '<a/>',
      },
    );
    expect(response.body.toString()).toBe('<a/>');
  });

  it('fails into on-error on a body that is not XML', async () => {
    const { response, context } = await outbound(
      '<xml-to-json kind="direct" apply="always" consider-accept-header="false" />',
      {
        body: '<a><b></a>',
      },
    );
    expect(response.status).toBe(500);
    expect(context.lastError?.source).toBe('xml-to-json');
  });
});
