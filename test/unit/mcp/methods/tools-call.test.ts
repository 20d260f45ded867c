import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { json } from '../../../doubles/mcp.js';
import { dispatcher, methodContext, request } from '../harness.js';

async function call(
  t: ReturnType<typeof methodContext>,
  name: string,
  args?: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return (await dispatcher.request(
    request('tools/call', args === undefined ? { name } : { name, arguments: args }),
    t.ctx,
  )) as Record<string, unknown>;
}

function result(reply: Record<string, unknown>) {
  expect(CallToolResultSchema.safeParse(reply.result).success).toBe(true);
  return reply.result as Record<string, unknown>;
}

describe('tools/call', () => {
  it('places arguments in path, query and headers, and passes the subject (never a token)', async () => {
    const t = methodContext();
    await call(t, 'getCourse', { id: 5, 'Customer-Key': 'k-1' });
    await call(t, 'listCourses', { courseID: 12 });
    expect(t.caller.calls.map((c) => [c.op.operationId, c.request])).toEqual([
      [
        'getCourse',
        {
          path: '/api/Course/5',
          templateParameters: { id: '5' },
          query: {},
          headers: { 'Customer-Key': 'k-1' },
        },
      ],
      [
        'listCourses',
        { path: '/api/Course?courseID=12', templateParameters: {}, query: { courseID: '12' }, headers: {} },
      ],
    ]);
    expect(t.caller.calls[0]!.subject).toEqual({
      sub: 'alice',
      clientId: 'c1',
      scopes: ['read:courses-work', 'write:courses-work'],
    });
  });

  it('percent-encodes template values', async () => {
    const t = methodContext({ scopes: ['write:admin-work'] });
    await call(t, 'delete_api_Admin_id', { id: 'a/b c?' });
    expect(t.caller.calls[0]!.request.path).toBe('/api/Admin/a%2Fb%20c%3F');
  });

  // The Inspector's `--tool-arg id=2` sends a JSON number: for a string-typed path or query parameter it is the same
  // text in the URL. Other checks stay: a header argument keeps its type, an integer parameter refuses text.
  it('takes a JSON number or boolean for a string-typed path parameter, as its text in the URL', async () => {
    const t = methodContext({ scopes: ['write:admin-work'] });
    expect(result(await call(t, 'delete_api_Admin_id', { id: 42 })).isError).toBeUndefined();
    expect(result(await call(t, 'delete_api_Admin_id', { id: false })).isError).toBeUndefined();
    expect(t.caller.calls.map((c) => [c.request.path, c.request.templateParameters])).toEqual([
      ['/api/Admin/42', { id: '42' }],
      ['/api/Admin/false', { id: 'false' }],
    ]);
    const other = methodContext();
    expect(result(await call(other, 'getCourse', { id: 5, 'Customer-Key': 7 }))).toEqual({
      content: [
        {
          type: 'text',
          text: 'Invalid arguments for tool getCourse: argument Customer-Key must be string',
        },
      ],
      isError: true,
    });
    expect(result(await call(t, 'delete_api_Admin_id', { id: { nested: 1 } })).isError).toBe(true);
  });

  it('sends the body argument as the request body', async () => {
    const t = methodContext();
    t.caller.response = json(201, { id: 7, name: 'Poetry' });
    const reply = await call(t, 'createCourse', { body: { name: 'Poetry', credits: 3 } });
    expect(t.caller.calls[0]!.request.body).toEqual({ name: 'Poetry', credits: 3 });
    expect(result(reply)).toEqual({
      content: [{ type: 'text', text: '{"id":7,"name":"Poetry"}' }],
      structuredContent: { id: 7, name: 'Poetry' },
    });
  });

  it('a 4xx/5xx answer is a tool error the model can read', async () => {
    const t = methodContext();
    t.caller.response = json(503, { error: 'down' });
    expect(result(await call(t, 'listCourses', {}))).toEqual({
      content: [
        { type: 'text', text: 'HTTP 503 Service Unavailable' },
        { type: 'text', text: '{"error":"down"}' },
      ],
      structuredContent: { error: 'down' },
      isError: true,
    });
  });

  it('a gateway failure is a tool error without internals; the cause is logged', async () => {
    const t = methodContext();
    t.caller.response = new Error('ECONNREFUSED 127.0.0.1:8080');
    expect(result(await call(t, 'getCourse', { id: 1 }))).toEqual({
      content: [{ type: 'text', text: 'The gateway could not complete GET /api/Course/1.' }],
      isError: true,
    });
    expect(t.logs).toMatchObject([
      { level: 'error', message: 'mcp: tools/call getCourse: gateway call failed' },
    ]);
  });

  it('invalid arguments: a tool error from 2025-11-25 on', async () => {
    const t = methodContext();
    expect(result(await call(t, 'getCourse', { id: 'x', extra: true }))).toEqual({
      content: [
        {
          type: 'text',
          text: 'Invalid arguments for tool getCourse: arguments: unknown argument "extra"; argument id must be integer',
        },
      ],
      isError: true,
    });
    expect(t.caller.calls).toEqual([]);
  });

  it.each(['2024-11-05', '2025-03-26', '2025-06-18'])('invalid arguments: -32602 in %s', async (revision) => {
    const t = methodContext({ revision });
    expect(await call(t, 'createCourse', { body: { credits: 3 } })).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32602,
        message: 'Invalid arguments for tool createCourse: argument body: missing required argument "name"',
        data: { errors: ['argument body: missing required argument "name"'] },
      },
    });
  });

  it('missing arguments default to {} and required ones are reported', async () => {
    const t = methodContext();
    expect(result(await call(t, 'getCourse'))).toEqual({
      content: [
        {
          type: 'text',
          text: 'Invalid arguments for tool getCourse: arguments: missing required argument "id"',
        },
      ],
      isError: true,
    });
  });

  it('an unknown tool, and a tool the scopes do not grant, are both "Unknown tool" (-32602)', async () => {
    const t = methodContext({ scopes: ['read:courses-work'] });
    for (const name of ['nope', 'createCourse']) {
      expect(await call(t, name, {})).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32602, message: `Unknown tool: ${name}` },
      });
    }
    expect(t.caller.calls).toEqual([]);
  });

  it('reports the missing scope before running, so HTTP can answer 403', () => {
    const t = methodContext({ scopes: ['read:courses-work'] });
    const missing = (name: string) => dispatcher.missingScopes([request('tools/call', { name })], t.ctx);
    expect(missing('createCourse')).toEqual(['write:courses-work']);
    expect(missing('delete_api_Admin_id')).toEqual(['write:admin-work']);
    expect(missing('getCourse')).toEqual([]);
    expect(missing('nope')).toEqual([]);
  });

  it('rejects malformed params with -32602', async () => {
    const t = methodContext();
    expect(await dispatcher.request(request('tools/call', { name: 3 }), t.ctx)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: 'tools/call: "name" must be a string' },
    });
    expect(
      await dispatcher.request(request('tools/call', { name: 'getCourse', arguments: [1] }), t.ctx),
    ).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: 'tools/call: "arguments" must be an object' },
    });
  });
});
