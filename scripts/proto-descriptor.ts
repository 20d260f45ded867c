// Writes proto/ext_proc.descriptor.json: the ext_proc protos (external_processor.proto and what it imports) as
// protobufjs's JSON descriptor, which the engine loads at start instead of parsing the .proto files (src/extproc/
// proto.ts). Run it after changing a file under proto/ (`node --import tsx scripts/proto-descriptor.ts`);
// test/unit/extproc/proto-descriptor.test.ts fails until then.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

export const protoRoot = fileURLToPath(new URL('../proto', import.meta.url));
export const descriptorPath = path.join(protoRoot, 'ext_proc.descriptor.json');

/** The descriptor, as JSON text, parsed from the .proto files under proto/. */
export function extProcDescriptor(): string {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (path.isAbsolute(target) ? target : path.join(protoRoot, target));
  root.loadSync('envoy/service/ext_proc/v3/external_processor.proto', { keepCase: true });
  root.resolveAll();
  return `${JSON.stringify(root.toJSON({ keepComments: false }), null, 1)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  writeFileSync(descriptorPath, extProcDescriptor());
}
