import type { ElementDefinition } from '../element.js';
import type { Getter } from '../node.js';
import { elements, GPAO, oneOf, str, text } from '../schema.js';
import type { TraceSeverity } from '../services.js';

/** Writes a trace entry (message and metadata) to the injected trace sink. */
export const trace: ElementDefinition = {
  name: 'trace',
  summary: 'Writes a trace message with metadata.',
  sections: ['inbound', 'backend', 'outbound'],
  scopes: GPAO,
  attributes: {
    source: str({ required: true, expression: false }),
    severity: oneOf(['verbose', 'information', 'error'], { default: 'verbose', expression: false }),
  },
  content: elements(
    { name: 'message', min: 1, max: 1, content: text(true) },
    {
      name: 'metadata',
      attributes: { name: str({ required: true, expression: false }), value: str({ required: true }) },
    },
  ),
  compile(node) {
    const source = String(node.literal('source'));
    const severity = node.literal('severity') as TraceSeverity;
    const message = node.child('message')!.text() ?? (() => '');
    const metadata: [string, Getter<string>][] = node
      .childrenNamed('metadata')
      .map((m) => [String(m.literal('name')), m.string('value')!]);
    return (run) => {
      run.services.trace.write({
        requestId: String(run.context.requestId),
        source,
        severity,
        message: message(run),
        metadata: metadata.map(([name, value]) => [name, value(run)] as const),
      });
      return 'next';
    };
  },
};
