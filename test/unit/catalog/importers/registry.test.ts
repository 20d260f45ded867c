import { describe, expect, it } from 'vitest';
import { importers } from '../../../../src/catalog/importers/index.js';

describe('the importers registry', () => {
  it('names each importer by the format it says it imports', async () => {
    for (const [format, load] of importers) expect((await load()).format).toBe(format);
  });
});
