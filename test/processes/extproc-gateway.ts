/**
 * The gateway the engine-level ext_proc tests run (the fuzzing harness and the regression tests for what it found):
 * the API `courses` run through `courses.xml` (a get by id, a create, a catch-all path) and the API `plain` without a
 * policy. Nothing listens on the backend: the engine answers alone or forwards, no request reaches it.
 */
export const EXTPROC_GATEWAY = `
apis:
  - id: courses
    urlSuffix: courses
    serviceUrl: http://127.0.0.1:9
    policy: courses.xml
    operations:
      - { id: get, method: GET, urlTemplate: "/api/Course/{id}" }
      - { id: create, method: POST, urlTemplate: /api/Course }
      - { id: rest, method: GET, urlTemplate: "/open/{*rest}" }
  - id: plain
    urlSuffix: plain
    serviceUrl: http://127.0.0.1:9
    operations:
      - { id: any, method: GET, urlTemplate: /x }
`;
