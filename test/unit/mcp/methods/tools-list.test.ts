import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../../../src/mcp/methods/tools-list.js';
import type { ToolOperation } from '../../../../src/mcp/types.js';
import { dispatcher, methodContext, request } from '../harness.js';

type ListResult = { tools: { name: string; [k: string]: unknown }[]; nextCursor?: string };

async function list(ctx: ReturnType<typeof methodContext>['ctx'], params: Record<string, unknown> = {}) {
  const reply = await dispatcher.request(request('tools/list', params), ctx);
  if (!('result' in reply)) throw new Error(JSON.stringify(reply));
  expect(ListToolsResultSchema.safeParse(reply.result).success).toBe(true);
  return reply.result as ListResult;
}

describe('tools/list', () => {
  it('shows only what the token scopes allow: read → GET tools, write → the others', async () => {
    expect(
      (await list(methodContext({ scopes: ['read:courses-work'] }).ctx)).tools.map((t) => t.name),
    ).toEqual(['getCourse', 'listCourses']);
    expect(
      (await list(methodContext({ scopes: ['write:courses-work'] }).ctx)).tools.map((t) => t.name),
    ).toEqual(['createCourse']);
    expect(
      (await list(methodContext({ scopes: ['write:admin-work', 'read:courses-work'] }).ctx)).tools.map(
        (t) => t.name,
      ),
    ).toEqual(['delete_api_Admin_id', 'getCourse', 'listCourses']);
    expect((await list(methodContext({ scopes: ['openid', 'offline_access'] }).ctx)).tools).toEqual([]);
  });

  it('describes a tool fully in 2025-11-25: title, description, 2020-12 input schema, annotations', async () => {
    const { tools } = await list(methodContext({ scopes: ['read:courses-work'] }).ctx);
    expect(tools[0]).toEqual({
      name: 'getCourse',
      title: 'Get one course',
      description: 'Get one course\n\nGET /api/Course/{id} of the API "Course API".',
      inputSchema: {
        type: 'object',
        properties: {
          id: { type: 'integer', description: 'path parameter {id}' },
          'Customer-Key': { type: 'string', description: 'request header "Customer-Key"' },
        },
        required: ['id'],
        additionalProperties: false,
      },
      annotations: {
        title: 'Get one course',
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: true,
      },
    });
  });

  it('leaves out what older revisions do not define', async () => {
    const old = (await list(methodContext({ revision: '2024-11-05', scopes: ['read:courses-work'] }).ctx))
      .tools[0]!;
    expect(Object.keys(old).sort()).toEqual(['description', 'inputSchema', 'name']);
    const mid = (await list(methodContext({ revision: '2025-03-26', scopes: ['read:courses-work'] }).ctx))
      .tools[0]!;
    expect(Object.keys(mid).sort()).toEqual(['annotations', 'description', 'inputSchema', 'name']);
  });

  it('marks header-parameter arguments with x-mcp-header in 2026-07-28 only (SEP-2243)', async () => {
    const customerKey = async (revision: string) => {
      const ctx = methodContext({ revision, scopes: ['read:courses-work'] }).ctx;
      const getCourse = (await list(ctx)).tools.find((t) => t.name === 'getCourse')!;
      return (getCourse.inputSchema as { properties: Record<string, unknown> }).properties['Customer-Key'];
    };
    expect(await customerKey('2026-07-28')).toEqual({
      type: 'string',
      description: 'request header "Customer-Key"',
      'x-mcp-header': 'Customer-Key',
    });
    for (const revision of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']) {
      expect(await customerKey(revision)).toEqual({
        type: 'string',
        description: 'request header "Customer-Key"',
      });
    }
  });

  it('marks a DELETE destructive and not read-only', async () => {
    const { tools } = await list(methodContext({ scopes: ['write:admin-work'] }).ctx);
    expect(tools[0]!.annotations).toEqual({
      title: 'DELETE /api/Admin/{id}',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: true,
    });
  });

  it('pages with opaque cursors until nextCursor is absent', async () => {
    const ops: ToolOperation[] = Array.from({ length: 7 }, (_, i) => ({
      apiId: 'a',
      apiName: 'A',
      productIds: ['p'],
      operationId: `op${i}`,
      method: 'GET',
      urlTemplate: `/x${i}`,
      templateParameters: [],
      queryParameters: [],
      headerParameters: [],
    }));
    const { ctx } = methodContext({ ops, pageSize: 3, scopes: ['read:p-work'] });
    const p1 = await list(ctx);
    expect(p1.tools.map((t) => t.name)).toEqual(['op0', 'op1', 'op2']);
    expect(p1.nextCursor).toBe(encodeCursor('op2'));
    const p2 = await list(ctx, { cursor: p1.nextCursor });
    expect(p2.tools.map((t) => t.name)).toEqual(['op3', 'op4', 'op5']);
    const p3 = await list(ctx, { cursor: p2.nextCursor });
    expect(p3.tools.map((t) => t.name)).toEqual(['op6']);
    expect(p3.nextCursor).toBeUndefined();
  });

  it('an exactly full last page has no nextCursor', async () => {
    const { ctx } = methodContext({ pageSize: 2, scopes: ['read:courses-work'] });
    expect(await list(ctx)).toEqual({ tools: expect.any(Array) });
  });

  it('an invalid cursor is -32602', async () => {
    const { ctx } = methodContext();
    for (const cursor of ['!!', 42, encodeCursor('not a name')]) {
      expect(await dispatcher.request(request('tools/list', { cursor }), ctx)).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32602, message: 'tools/list: invalid cursor' },
      });
    }
  });
});
