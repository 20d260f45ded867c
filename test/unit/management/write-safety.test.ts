import { randomUUID } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { isInsideFolder } from '../../../src/management/inside-folder.js';
import { apiPolicy, details, type ManagementHarness, startManagement } from './harness.js';

const xml = { type: 'application/xml' } as const;
const regenerate = '/subscriptions/alice-starter/regeneratePrimaryKey';

/** Issue 13: writes that escape the configuration folder, forged cross-site writes, a YAML alias bomb. */
describe('management write safety', () => {
  let h: ManagementHarness;
  let victim: string;
  beforeEach(async () => {
    h = await startManagement();
    // A file beside the configuration's folder, which the management API must never write.
    victim = path.join(path.dirname(h.store.directory), `victim-${randomUUID()}.xml`);
    await writeFile(victim, apiPolicy);
  });
  afterEach(async () => {
    await h.close();
    await rm(victim, { force: true });
  });

  describe('policy files stay inside the configuration folder', () => {
    it('refuses a policy path that leads outside (relative or absolute), and the file is never written', async () => {
      for (const policy of [`../${path.basename(victim)}`, victim]) {
        const response = await h.request('PATCH', '/apis/staff', { body: { policy } });
        expect(response.status, policy).toBe(400);
        expect(response.json.error.message).toBe('policy files must be inside the configuration folder');
        expect(details(response)).toEqual([
          `apis[1].policy: the policy file ${victim} is outside the configuration folder ${h.store.directory}`,
        ]);
      }
      // The next policy write goes where the API's `policy` names: still the configuration, never the victim.
      const written = await h.request('PUT', '/apis/staff/policies/policy', {
        ...xml,
        body: apiPolicy.replace('courses', 'overwritten'),
      });
      expect(written.status).toBeLessThan(300);
      expect(await readFile(victim, 'utf8')).toBe(apiPolicy);
      expect(await h.read('gateway.yaml')).not.toContain('victim-');
    });

    it('refuses an imported configuration that names a policy file outside', async () => {
      const exported = (await h.request('GET', '/configuration', { headers: { accept: 'application/json' } }))
        .json;
      exported.apis[1].policy = `../${path.basename(victim)}`;
      const response = await h.request('PUT', '/configuration', {
        type: 'application/yaml',
        body: stringify(exported),
      });
      expect(response.status).toBe(400);
      expect(details(response)[0]).toMatch(
        /^apis\[1\]\.policy: the policy file .* is outside the configuration folder/,
      );
      expect(h.store.running().generation).toBe(1);
    });

    it('keeps writing policy files that are inside', async () => {
      const response = await h.request('PUT', '/apis/courses/policies/policy', { ...xml, body: apiPolicy });
      expect(response.status).toBeLessThan(300);
    });

    it('tells inside from outside', () => {
      expect(isInsideFolder('/etc/gw', '/etc/gw/policies/a.xml')).toBe(true);
      expect(isInsideFolder('/etc/gw', '/etc/gw/..policies.xml')).toBe(true);
      expect(isInsideFolder('/etc/gw', '/etc/gw')).toBe(false);
      expect(isInsideFolder('/etc/gw', '/etc/gw2/a.xml')).toBe(false);
      expect(isInsideFolder('/etc/gw', '/etc/passwd')).toBe(false);
      expect(isInsideFolder('/etc/gw', path.resolve('/etc/gw', '../gw-other/a.xml'))).toBe(false);
    });
  });

  describe('forged writes', () => {
    it('refuses a form-encoded (or text, or multipart) write with 415, changing nothing', async () => {
      const before = await h.read('gateway.yaml');
      for (const type of [
        'application/x-www-form-urlencoded',
        'text/plain',
        'multipart/form-data; boundary=x',
      ]) {
        const response = await h.request('POST', regenerate, { type, body: '' });
        expect(response.status, type).toBe(415);
        expect(response.json.error.code).toBe('UnsupportedMediaType');
      }
      const unlabelled = await fetch(`${h.url}${regenerate}`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from('admin:correct horse battery staple').toString('base64')}`,
        },
        body: new Uint8Array([97, 61, 98]),
      });
      expect(unlabelled.status).toBe(415);
      expect(await h.read('gateway.yaml')).toBe(before);
    });

    it('refuses a write from a foreign Origin or a cross-site fetch with 403, before signing in', async () => {
      for (const headers of <Record<string, string>[]>[
        { origin: 'https://evil.example' },
        { origin: 'null' },
        { origin: h.url.replace(/:\d+$/, ':1') },
        { 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-site': 'same-site' },
      ]) {
        const response = await h.request('POST', regenerate, { headers });
        expect(response.status, JSON.stringify(headers)).toBe(403);
        expect(response.json.error.code).toBe('Forbidden');
        // Refused before the credential is checked: no failed sign-ins to count, no lock-out to cause.
        const anonymous = await h.request('POST', regenerate, { headers, auth: null });
        expect(anonymous.status).toBe(403);
      }
    });

    it('accepts writes from tools (no Origin) and from its own origin; reads are not affected', async () => {
      expect((await h.request('POST', regenerate)).status).toBe(204);
      expect(
        (await h.request('POST', regenerate, { headers: { origin: h.url, 'sec-fetch-site': 'same-origin' } }))
          .status,
      ).toBe(204);
      expect(
        (await h.request('GET', '/subscriptions', { headers: { origin: 'https://evil.example' } })).status,
      ).toBe(200);
      expect(
        (
          await h.request('PUT', '/policies/policy', {
            type: 'application/vnd.ms-azure-apim.policy.raw+xml',
            body: apiPolicy,
          })
        ).status,
      ).toBeLessThan(300);
    });
  });

  describe('YAML alias bomb', () => {
    const bomb = () => {
      const lines = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]'];
      for (let level = 1; level < 9; level++) {
        const [previous, name] = [String.fromCharCode(96 + level), String.fromCharCode(97 + level)];
        lines.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
      }
      return `${lines.join('\n')}\n`;
    };

    it.each(['application/yaml', 'application/json'])('is refused with 400, as %s', async (type) => {
      const response = await h.request('PUT', '/configuration', { type, body: bomb() });
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('ValidationError');
      expect(details(response).join('\n')).toMatch(/alias/i);
      expect(h.store.running().generation).toBe(1);
    });
  });
});
