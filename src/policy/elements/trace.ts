import { defineElement } from '../element.js';
import type { Getter } from '../node.js';
import { GPAO, oneOf, str, text } from '../schema.js';

/** Writes a trace entry (message and metadata) to the injected trace sink. */
export const trace = defineElement({
  name: 'trace',
  summary: 'Writes a trace message with metadata.',
  // The trace page lists inbound/backend/outbound; the on-error reference allows it there too.
  sections: ['inbound', 'backend', 'outbound', 'on-error'],
  scopes: GPAO,
  attributes: {
    source: str({ required: true, expression: false }),
    severity: oneOf(['verbose', 'information', 'error'], { default: 'verbose', expression: false }),
  },
  // Older documents put the message directly inside <trace>; both forms are accepted.
  content: {
    kind: 'elements',
    text: true,
    elements: [
      { name: 'message', max: 1, content: text(true) },
      {
        name: 'metadata',
        attributes: { name: str({ required: true, expression: false }), value: str({ required: true }) },
      },
    ],
  },
  compile(node, c) {
    if (node.child('message') === undefined && node.content === undefined) {
      c.error(node, 'children', 'trace needs a <message>, got none');
    }
    if (node.child('message') !== undefined && node.content !== undefined) {
      c.error(node, 'children', 'trace takes its message as <message> or as text, got both');
    }
    const source = node.literal('source');
    const severity = node.literal('severity');
    const message = node.child('message')?.text() ?? node.text() ?? (() => '');
    const metadata: [string, Getter<string>][] = node
      .childrenNamed('metadata')
      .map((m) => [m.literal('name'), m.getter('value')]);
    return (run) => {
      run.services.trace.write({
        requestId: run.context.requestId.value,
        source,
        severity,
        message: message(run),
        metadata: metadata.map(([name, value]) => [name, value(run)] as const),
      });
      return 'next';
    };
  },
});
