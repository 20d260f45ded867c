import type { Context } from 'koa';
import { type ConfigDocument, type ConfigPath, entityTag } from '../config-document.js';
import { ManagementError } from '../errors.js';
import type { ManagementResource } from '../resource.js';
import { checkPreconditions, xmlMediaTypes } from '../resource.js';
import { indexOf, operationId } from './references.js';

type Params = Record<string, string>;

/**
 * Policy documents as raw XML, at API Management's addresses: the global policy, a product's, an API's, an
 * operation's, and policy fragments. `PUT` takes the XML as it would be written in a file (compiled before it is
 * applied; an error names the line and column in that XML), into the file the scope already names or inline in the
 * configuration. `DELETE` removes the scope's policy (a file it named stays on disk).
 */
const scopes: readonly {
  route: string;
  what: (params: Params) => string;
  at: (document: ConfigDocument, params: Params) => ConfigPath;
}[] = [
  { route: '/policies/policy', what: () => 'the global policy', at: () => ['policy'] },
  {
    route: '/products/:productId/policies/policy',
    what: (p) => `the policy of product "${p.productId}"`,
    at: (document, p) => ['products', indexOf(document, ['products'], p.productId!, 'product'), 'policy'],
  },
  {
    route: '/apis/:apiId/policies/policy',
    what: (p) => `the policy of API "${p.apiId}"`,
    at: (document, p) => ['apis', indexOf(document, ['apis'], p.apiId!, 'API'), 'policy'],
  },
  {
    route: '/apis/:apiId/operations/:operationId/policies/policy',
    what: (p) => `the policy of operation "${p.operationId}"`,
    at: (document, p) => {
      const api = indexOf(document, ['apis'], p.apiId!, 'API');
      const index = document
        .list(['apis', api, 'operations'])
        .findIndex((entry) => operationId(entry) === p.operationId);
      if (index < 0)
        throw new ManagementError(404, 'ResourceNotFound', `operation "${p.operationId}" not found`);
      return ['apis', api, 'operations', index, 'policy'];
    },
  },
  {
    route: '/policyFragments/:fragmentId',
    what: (p) => `policy fragment "${p.fragmentId}"`,
    at: (_document, p) => ['fragments', p.fragmentId!],
  },
];

function answerXml(ctx: Context, status: number, xml: string): void {
  ctx.status = status;
  ctx.set('ETag', entityTag(xml));
  ctx.type = 'application/xml; charset=utf-8';
  ctx.body = xml;
}

export const policies: ManagementResource = {
  name: 'policies',
  register(router, api) {
    router.get('/policyFragments', (ctx) => {
      const value = api
        .read()
        .document.entries(['fragments'])
        .map(([id]) => ({ id }));
      ctx.body = { value, count: value.length };
    });

    for (const scope of scopes) {
      router.get(scope.route, (ctx) => {
        const { document } = api.read();
        const xml = document.policy(scope.at(document, ctx.params));
        if (xml === undefined)
          throw new ManagementError(404, 'ResourceNotFound', `${scope.what(ctx.params)} is not set`);
        answerXml(ctx, 200, xml);
      });

      router.put(scope.route, async (ctx) => {
        const xml = await api.readText(ctx, xmlMediaTypes);
        if (xml.trim() === '')
          throw new ManagementError(400, 'ValidationError', 'the policy document is empty');
        const created = await api.change(ctx, (document) => {
          const at = scope.at(document, ctx.params);
          const current = document.policy(at);
          checkPreconditions(ctx, current, 'the policy');
          document.setPolicy(at, xml);
          return current === undefined;
        });
        answerXml(ctx, created ? 201 : 200, xml);
      });

      router.delete(scope.route, async (ctx) => {
        await api.change(ctx, (document) => {
          const at = scope.at(document, ctx.params);
          const current = document.policy(at);
          if (current === undefined)
            throw new ManagementError(404, 'ResourceNotFound', `${scope.what(ctx.params)} is not set`);
          checkPreconditions(ctx, current, 'the policy');
          document.delete(at);
        });
        ctx.status = 204;
      });
    }
  },
};
