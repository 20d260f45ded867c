import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The spec's sample Course API: GET /api/Course, GET /api/Course/{id}, POST /api/Course. Courses live in memory.
 * Every response carries `x-backend-saw-path` and `x-backend-saw-request-id` so a caller can see what arrived.
 */
export interface Course {
  id: number;
  title: string;
  credits: number;
}

const seedCourses: readonly Course[] = [
  { id: 1, title: 'Networks', credits: 5 },
  { id: 2, title: 'Compilers', credits: 6 },
  { id: 3, title: 'Distributed Systems', credits: 5 },
];

export function createCourseBackend(): Server {
  const courses = seedCourses.map((course) => ({ ...course }));
  return createServer(async (request, response) => {
    response.setHeader('x-backend-saw-path', request.url ?? '');
    response.setHeader('x-backend-saw-request-id', String(request.headers['x-request-id'] ?? ''));
    const url = new URL(request.url ?? '/', 'http://backend');
    const byId = /^\/api\/Course\/([^/]+)$/.exec(url.pathname);
    if (url.pathname === '/healthz') return send(response, 200, { status: 'ok' });
    if (url.pathname === '/api/Course' && request.method === 'GET') return send(response, 200, courses);
    if (url.pathname === '/api/Course' && request.method === 'POST') {
      const input = await readJson(request);
      if (!input || typeof input.title !== 'string' || typeof input.credits !== 'number') {
        return send(response, 400, { error: 'a course needs "title" (string) and "credits" (number)' });
      }
      const course = {
        id: Math.max(0, ...courses.map((c) => c.id)) + 1,
        title: input.title,
        credits: input.credits,
      };
      courses.push(course);
      return send(response, 201, course);
    }
    if (byId && request.method === 'GET') {
      const course = courses.find((candidate) => String(candidate.id) === decodeURIComponent(byId[1]!));
      return course
        ? send(response, 200, course)
        : send(response, 404, { error: `no course with id ${byId[1]}` });
    }
    return send(response, 404, { error: `no route for ${request.method} ${url.pathname}` });
  });
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

// Run as a program (`node backend.ts`): listen on $PORT (default 8081) on loopback.
if (import.meta.url === `file://${process.argv[1]}`) {
  const server = createCourseBackend();
  server.listen(Number(process.env.PORT ?? 8081), process.env.HOST ?? '127.0.0.1', () => {
    const { address, port } = server.address() as AddressInfo;
    console.log(`course backend listening on ${address}:${port}`);
  });
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
