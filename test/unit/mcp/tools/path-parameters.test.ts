import { describe, expect, it } from 'vitest';
import type { ToolOperation } from '../../../../src/mcp/index.js';
import { dispatcher, methodContext, request } from '../harness.js';

/**
 * Issue 13 item 3: a tool call's arguments must not escape the tool's operation. The gateway normalises every
 * path before it picks the operation, so a path parameter of ".." (or a wildcard climbing out) would run another
 * operation's policy — or, before normalisation was fixed, reach it without one.
 */
const course = { apiId: 'courses', apiName: 'Courses', productIds: ['courses'] };
const none = { templateParameters: [], queryParameters: [], headerParameters: [] };
const operations: ToolOperation[] = [
  {
    ...course,
    ...none,
    operationId: 'getCourse',
    method: 'GET',
    urlTemplate: '/api/Course/{id}',
    templateParameters: [{ name: 'id', required: true }],
  },
  {
    ...course,
    ...none,
    operationId: 'openFile',
    method: 'GET',
    urlTemplate: '/open/{*rest}',
    templateParameters: [{ name: 'rest', required: true }],
  },
  {
    ...course,
    ...none,
    operationId: 'courseStudents',
    method: 'GET',
    urlTemplate: '/api/{course}/students',
    templateParameters: [{ name: 'course', required: true }],
  },
  {
    ...course,
    ...none,
    operationId: 'search',
    method: 'GET',
    urlTemplate: '/search?q={q}',
    templateParameters: [{ name: 'q', required: true }],
  },
];

async function callTool(name: string, args: Record<string, unknown>, revision = '2025-11-25') {
  const t = methodContext({ ops: operations, revision });
  const reply = (await dispatcher.request(request('tools/call', { name, arguments: args }), t.ctx)) as {
    result?: { isError?: boolean; content: { type: string; text: string }[] };
    error?: { code: number; message: string };
  };
  return { reply, calls: t.caller.calls };
}

describe('tools/call path parameters stay within their operation', () => {
  it.each([
    ['getCourse', { id: '..' }],
    ['getCourse', { id: '.' }],
    ['getCourse', { id: '../x' }],
    ['getCourse', { id: '..\\x' }],
    ['getCourse', { id: 'x/..' }],
    ['getCourse', { id: '..;x' }],
    ['openFile', { rest: '../../guarded/api/Course' }],
    ['openFile', { rest: 'a/../../api/Course/1' }],
    ['openFile', { rest: 'a/./b' }],
    ['courseStudents', { course: '' }],
  ])('%s %j is a tool error naming the argument; the gateway is not called', async (name, args) => {
    const { reply, calls } = await callTool(name, args);
    expect(reply.result?.isError).toBe(true);
    const text = reply.result!.content[0]!.text;
    expect(text).toContain(`Invalid arguments for tool ${name}: argument ${Object.keys(args)[0]}:`);
    expect(calls).toEqual([]);
  });

  it('a wildcard with an empty segment is refused: the gateway would merge the slashes', async () => {
    const { reply, calls } = await callTool('openFile', { rest: 'a//b' });
    expect(reply.result?.content[0]?.text).toBe(
      'Invalid arguments for tool openFile: arguments: the gateway would resolve the path "/open/a//b" to ' +
        '"/open/a/b", which may not be /open/{*rest} (no empty or dot-segments)',
    );
    expect(calls).toEqual([]);
  });

  it('is JSON-RPC -32602 before 2025-11-25, like any invalid argument', async () => {
    const { reply, calls } = await callTool('getCourse', { id: '..' }, '2025-06-18');
    expect(reply.error?.code).toBe(-32602);
    expect(reply.error?.message).toContain("would leave the operation's path");
    expect(calls).toEqual([]);
  });

  it.each([
    ['getCourse', { id: 'a/b' }, '/api/Course/a%2Fb'],
    ['getCourse', { id: '...' }, '/api/Course/...'],
    ['getCourse', { id: '%2e%2e' }, '/api/Course/%252e%252e'],
    ['getCourse', { id: '..x' }, '/api/Course/..x'],
    ['openFile', { rest: 'a/b/c.txt' }, '/open/a/b/c.txt'],
    ['openFile', { rest: '' }, '/open/'],
    ['search', { q: '..' }, '/search?q=..'],
  ])('%s %j is sent as %s', async (name, args, path) => {
    const { reply, calls } = await callTool(name, args);
    expect(reply.result?.isError, JSON.stringify(reply)).toBeUndefined();
    expect(calls.map((call) => call.request.path)).toEqual([path]);
  });
});
