import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseTestFile } from '../../../src/testing/test-file.js';

/** Every problem of a test file, as the CLI prints it: `file:line:col: key.path: message`. */
function problems(text: string): string[] {
  try {
    parseTestFile(text, 'api.policy-test.yaml');
  } catch (error) {
    if (error instanceof ConfigError) return error.message.split('\n');
    throw error;
  }
  return [];
}

describe('the policy test file', () => {
  it('reads a case with its request, stubs and expectations, defaults filled in', () => {
    const { tests } = parseTestFile(
      `cases:
  - name: lists
    api: courses
    operation: list
    request: { query: { page: 2 } }
    stubs: { backend: { body: [1] } }
    expect: { status: 200, body: { json: [1] } }
`,
      'x.policy-test.yaml',
    );
    const [first] = tests.cases;
    expect(first!.request).toMatchObject({
      query: { page: '2' },
      host: 'localhost',
      clientAddress: '127.0.0.1',
    });
    expect(first!.stubs.backend).toEqual({ status: 200, headers: {}, body: [1] });
    expect(first!.expect.body).toEqual({ json: [1] });
  });

  it('places an unknown key, a wrong type and a missing name at their line and column, with the key path', () => {
    expect(
      problems(`cases:
  - name: one
    api: courses
    reqest: {}
  - api: courses
    operation: list
    expect:
      status: "two hundred"
`),
    ).toEqual([
      'api.policy-test.yaml:4:5: cases[0].reqest: unknown key "reqest"',
      'api.policy-test.yaml:5:5: cases[1].name: is required',
      'api.policy-test.yaml:8:7: cases[1].expect.status: must be a number, got a string ("two hundred")',
    ]);
  });

  it('says what a case lacks to know where to send its request', () => {
    expect(problems('cases:\n  - name: nowhere\n')).toEqual([
      'api.policy-test.yaml:2:5: cases[0].request: give api (and operation) or request.path',
    ]);
  });

  it('refuses a stub that fails in an unknown way and a symmetric key too short to sign with', () => {
    expect(
      problems(`keys:
  k: { algorithm: HS256, secret: short }
cases:
  - name: one
    request: { path: /x }
    stubs: { backend: { fail: slowly } }
`),
    ).toEqual([
      'api.policy-test.yaml:2:26: keys.k.secret: must have at least 16 characters, got "short"',
      'api.policy-test.yaml:6:14: cases[0].stubs.backend: matches none of the forms allowed here',
    ]);
  });

  it('reports a YAML syntax error at its place', () => {
    expect(problems('cases:\n  - name: [unclosed\n')).toHaveLength(1);
    expect(problems('cases:\n  - name: [unclosed\n')[0]).toMatch(/^api\.policy-test\.yaml:\d+:\d+: /);
  });
});
