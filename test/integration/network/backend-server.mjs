// The sample backend of the network tests, run inside the backend's namespace: answers every request with who
// it is and the path it got. Usage: node backend-server.mjs HOST PORT
import { createServer } from 'node:http';

const [host, port] = process.argv.slice(2);
createServer((request, response) => {
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify({ backend: 'courses', path: request.url }));
}).listen(Number(port), host, () => process.stdout.write('listening\n'));
