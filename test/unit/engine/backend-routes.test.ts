import { describe, expect, it } from 'vitest';
import { BackendRoutes } from '../../../src/engine/backend-routes.js';

// Issue #34, item 6: the example's two APIs share one backend, and `portcullis stats` showed the /courses traffic
// under the cluster `api_guarded` (the last API with that origin took it).
describe('BackendRoutes', () => {
  const routes = new BackendRoutes(
    [
      { id: 'courses', serviceUrl: 'http://127.0.0.1:8081' },
      { id: 'guarded', serviceUrl: 'http://127.0.0.1:8081/guarded' },
    ],
    new Map([['bulk', 'http://127.0.0.1:8081']]),
  );

  it('sends an API’s own traffic to its own cluster when APIs share a backend origin', () => {
    expect(routes.forUrl('http://127.0.0.1:8081', 'courses').cluster).toBe('api_courses');
    expect(routes.forUrl('http://127.0.0.1:8081/guarded', 'guarded').cluster).toBe('api_guarded');
    // The route worked out for one API is not handed to the other.
    expect(routes.forUrl('http://127.0.0.1:8081', 'guarded').cluster).toBe('api_guarded');
  });

  it('sends a URL on an origin no API of the request owns to the first API declaring it, or the dynamic proxy', () => {
    expect(routes.forUrl('http://127.0.0.1:8081/x').cluster).toBe('api_courses');
    expect(routes.forUrl('http://example.test/x', 'courses')).toMatchObject({
      cluster: 'dynamic_http',
      authority: 'example.test',
    });
    expect(routes.forBackendId('bulk').cluster).toBe('backend_bulk');
  });
});
