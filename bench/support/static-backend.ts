import { createServer } from 'node:http';

// The benchmark's backend: the same small JSON for every request, as cheap as Node can answer.
const body = Buffer.from(JSON.stringify([{ id: 1, title: 'Networks', credits: 5 }]));
createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  response.end(body);
}).listen(Number(process.env.PORT), '127.0.0.1');
