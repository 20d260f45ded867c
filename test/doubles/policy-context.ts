import {
  type CompileOptions,
  compileExpression,
  HeaderCollection,
  MessageBody,
  PolicyContext,
  RequestModel,
  ResponseModel,
  toDotNetString,
} from '../../src/expr/index.js';

/** A request like the spec samples use: a course lookup with a customer key. */
export function makeContext(body?: string): PolicyContext {
  const ctx = new PolicyContext({
    request: new RequestModel({
      method: 'POST',
      url: 'https://api.example.com:8443/courses/42?courseID=CS101&tag=a&tag=b',
      headers: new HeaderCollection([
        ['Customer-Key', 'secret-key'],
        ['Content-Length', '2048'],
        ['Accept', ['application/json', 'text/plain']],
        ['Authorization', 'Basic dXNlcjpwYXNz'],
      ]),
      body: body ?? '{"name":"Ada","age":36,"tags":["x","y"],"score":1.5,"nested":{"ok":true}}',
      ipAddress: '203.0.113.7',
      matchedParameters: { id: '42' },
    }),
    requestId: '0f8fad5b-d9cb-469f-a165-70867728950e',
    timestamp: new Date('2024-03-01T12:00:00Z'),
    now: () => Date.parse('2024-03-01T12:00:01.500Z'),
  });
  ctx.variables.set('name', 'Ada');
  ctx.variables.set('count', 3);
  ctx.variables.set('flag', true);
  ctx.response = new ResponseModel({
    statusCode: 200,
    statusReason: 'OK',
    body: new MessageBody('{"ok":1}'),
  });
  return ctx;
}

export function evaluate(
  text: string,
  ctx: PolicyContext = makeContext(),
  kind: CompileOptions['kind'] = 'expression',
): unknown {
  return compileExpression(text, { kind }).evaluate(ctx);
}

/** The value as .NET's ToString() renders it — asserting this checks the .NET type as well as the value
 *  (2 vs 2.5, "True" vs "true", 1E+15). */
export function show(text: string, ctx?: PolicyContext): string {
  return toDotNetString(evaluate(text, ctx));
}

export function showBlock(text: string, ctx?: PolicyContext): string {
  return toDotNetString(evaluate(text, ctx, 'block'));
}

/** The exception type and message an expression fails with. */
export function failure(
  text: string,
  kind: CompileOptions['kind'] = 'expression',
  ctx?: PolicyContext,
): string {
  try {
    evaluate(text, ctx ?? makeContext(), kind);
  } catch (e) {
    return (e as Error).message;
  }
  return 'no error';
}
