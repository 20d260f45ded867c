import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../../../src/config/load.js';
import { ToolRegistry } from '../../../../src/mcp/tools/registry.js';
import { configToolCatalog } from '../../../../src/service/catalog.js';

const example = fileURLToPath(new URL('../../../../examples/courses/gateway.yaml', import.meta.url));

/**
 * The example's tools as an MCP client sees them: `{id}` of get-course is an integer, so the Inspector's
 * `--tool-arg id=2` (a JSON number) is what the schema asks for, and text that is no number is refused.
 */
describe('the courses example as tools', () => {
  it('types get-course {id} as an integer and takes the number a client sends', async () => {
    const { config } = await loadConfigFile(example);
    const tools = new ToolRegistry(configToolCatalog(config));
    const getCourse = tools.find('get-course')!;
    expect(getCourse.inputSchema).toMatchObject({
      properties: { id: { type: 'integer', description: "The course's id (path parameter {id})" } },
      required: ['id'],
    });
    expect(getCourse.validate({ id: 2 })).toEqual([]);
    expect(getCourse.validate({ id: 'two' })).toEqual(['argument id must be integer']);
    tools.close();
  });
});
