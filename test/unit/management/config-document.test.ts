import { describe, expect, it } from 'vitest';
import { formatPath } from '../../../src/config/load.js';
import { isInlinePolicy } from '../../../src/config/policy-source.js';
import { ConfigDocument, entityTag } from '../../../src/management/config-document.js';

const file = '/srv/gateway/gateway.yaml';
const policyFile = '/srv/gateway/policies/api.xml';
// Flow collections are written padded (`[ courses ]`): the YAML library renders every flow collection that way.
const text = `# Operator's header comment.
apis:
  # The course catalogue.
  - id: courses
    urlSuffix: courses # public path
    serviceUrl: "http://127.0.0.1:8081"
    policy: policies/api.xml
    operations:
      - id: list
        method: GET
        urlTemplate: /a # first
      - id: one
        method: GET
        urlTemplate: /a/{id} # second

products:
  - { id: starter, apis: [ courses ] } # keep this product

namedValues:
  greeting: hello # plain
`;

function document(): ConfigDocument {
  return new ConfigDocument(
    file,
    new Map([
      [file, text],
      [policyFile, '<policies />'],
    ]),
  );
}

describe('ConfigDocument', () => {
  it('reads lists, maps and values as plain data', () => {
    const doc = document();
    expect(doc.list(['apis']).map((api) => api.id)).toEqual(['courses']);
    expect(doc.list(['users'])).toEqual([]);
    expect(doc.entries(['namedValues'])).toEqual([['greeting', 'hello']]);
    expect(doc.get(['products', 0, 'apis'])).toEqual(['courses']);
    expect(doc.get(['nothing', 'here'])).toBeUndefined();
  });

  it('changes one field of an entry and leaves every other line as the operator wrote it', () => {
    const doc = document();
    const api = doc.list(['apis'])[0]!;
    doc.setListEntry(['apis'], 0, { ...api, serviceUrl: 'http://127.0.0.1:9000' });
    expect(doc.toString()).toBe(text.replace('"http://127.0.0.1:8081"', '"http://127.0.0.1:9000"'));
  });

  it('keeps a flow entry and its comment when one of its lists changes', () => {
    const doc = document();
    doc.set(['products', 0, 'apis'], ['courses', 'staff']);
    expect(doc.toString()).toContain('  - { id: starter, apis: [ courses, staff ] } # keep this product\n');
    doc.setListEntry(['products'], 0, { id: 'starter', name: 'Starter', apis: ['courses'] });
    expect(doc.toString()).toContain(
      '  - { id: starter, apis: [ courses ], name: Starter } # keep this product\n',
    );
  });

  it('matches entries with ids by id, so each keeps its comments when the order changes', () => {
    const doc = document();
    const api = doc.list(['apis'])[0]!;
    const [list, one] = api.operations as Record<string, unknown>[];
    doc.setListEntry(['apis'], 0, { ...api, operations: [one, list] });
    const out = doc.toString();
    expect(out).toContain('      - id: one\n        method: GET\n        urlTemplate: /a/{id} # second\n');
    expect(out).toContain('      - id: list\n        method: GET\n        urlTemplate: /a # first\n');
    expect(out.indexOf('id: one')).toBeLessThan(out.indexOf('id: list'));
  });

  it('removes keys an entry no longer has and adds new entries in block style', () => {
    const doc = document();
    const { policy: _policy, ...api } = doc.list(['apis'])[0]!;
    doc.setListEntry(['apis'], 0, api);
    doc.setListEntry(['products'], Number.MAX_SAFE_INTEGER, { id: 'gold', apis: ['courses'] });
    const out = doc.toString();
    expect(out).not.toContain('policy:');
    expect(out).toContain(
      '  - { id: starter, apis: [ courses ] } # keep this product\n  - id: gold\n    apis:\n',
    );
    expect(doc.list(['products']).map((p) => p.id)).toEqual(['starter', 'gold']);
  });

  it('creates the maps and lists on the way', () => {
    const doc = document();
    doc.set(['namedValues', 'token'], { value: 'x', secret: true });
    doc.setListEntry(['backends'], 0, { id: 'bulk', url: 'http://b' });
    expect(doc.entries(['namedValues'])).toEqual([
      ['greeting', 'hello'],
      ['token', { value: 'x', secret: true }],
    ]);
    expect(doc.list(['backends'])).toEqual([{ id: 'bulk', url: 'http://b' }]);
    expect(doc.toString()).toContain('  greeting: hello # plain\n');
  });

  it('deletes list entries and map keys', () => {
    const doc = document();
    doc.deleteListEntry(['products'], 0);
    doc.delete(['namedValues', 'greeting']);
    expect(doc.list(['products'])).toEqual([]);
    expect(doc.entries(['namedValues'])).toEqual([]);
    expect(doc.toString()).toContain('# The course catalogue.');
  });

  it('edits a policy in the file the scope names, leaving the configuration as it was', () => {
    const doc = document();
    expect(doc.policy(['apis', 0, 'policy'])).toBe('<policies />');
    doc.setPolicy(['apis', 0, 'policy'], '<policies>\n  <inbound />\n</policies>');
    expect(doc.policy(['apis', 0, 'policy'])).toBe('<policies>\n  <inbound />\n</policies>');
    // Only the policy file: the configuration file is not rewritten.
    expect([...doc.changes()]).toEqual([[policyFile, '<policies>\n  <inbound />\n</policies>']]);
  });

  it('writes a policy inline as a block scalar when the scope names no file', () => {
    const doc = document();
    expect(doc.policy(['policy'])).toBeUndefined();
    doc.setPolicy(['policy'], '<policies>\n  <inbound />\n</policies>\n');
    expect(doc.toString()).toContain('policy: |\n  <policies>\n    <inbound />\n  </policies>\n');
    expect(doc.policy(['policy'])).toBe('<policies>\n  <inbound />\n</policies>\n');
    expect([...doc.changes().keys()]).toEqual([file]);
  });

  it('inlines every policy for an export', () => {
    const doc = document();
    doc.inlinePolicies();
    expect(doc.get(['apis', 0, 'policy'])).toBe('<policies />');
  });

  it('keeps a replaced configuration verbatim until it is edited', () => {
    const doc = document();
    const imported = '# imported\napis: []   # none yet\n';
    doc.replace(imported);
    expect(doc.toString()).toBe(imported);
    doc.set(['namedValues', 'a'], 'b');
    expect(doc.toString()).toBe('# imported\napis: [] # none yet\nnamedValues:\n  a: b\n');
  });

  it('gives the text it was read from, byte for byte, until it is edited', () => {
    const flow = 'apis: [ ]\nproducts: [{id: a}]   # odd spacing\n';
    const doc = new ConfigDocument(file, new Map([[file, flow]]));
    expect(doc.toString()).toBe(flow);
    expect(doc.changes().size).toBe(0);
  });

  it('copies independently', () => {
    const doc = document();
    const copy = doc.copy();
    copy.delete(['apis']);
    expect(doc.list(['apis'])).toHaveLength(1);
    expect(copy.list(['apis'])).toHaveLength(0);
  });

  it('refuses to treat a scalar as a list', () => {
    const doc = new ConfigDocument(file, new Map([[file, 'apis: 3\n']]));
    expect(() => doc.list(['apis'])).toThrow('apis is not a list');
  });
});

describe('helpers', () => {
  it('tells inline XML from a file name', () => {
    expect(isInlinePolicy('  <policies/>')).toBe(true);
    expect(isInlinePolicy('policies/a.xml')).toBe(false);
  });

  it('formats paths as the configuration errors do', () => {
    expect(formatPath(['apis', 2, 'operations', 0, 'policy'])).toBe('apis[2].operations[0].policy');
  });

  it('gives a strong entity tag that moves with the JSON', () => {
    expect(entityTag({ a: 1 })).toBe(entityTag({ a: 1 }));
    expect(entityTag({ a: 1 })).not.toBe(entityTag({ a: 2 }));
    expect(entityTag({ a: 1 })).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
  });
});
