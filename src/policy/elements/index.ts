/**
 * The element registry: every policy element Portcullis runs, one file each, and the reference elements it
 * only declares. `base` is structural (handled by the loader's scope stitching) and so has no entry here.
 */
import type { DeclaredElement, ElementDefinition } from '../element.js';
import { choose } from './choose.js';
import { DECLARED_ELEMENTS } from './declared.js';
import { forwardRequest } from './forward-request.js';
import { includeFragment } from './include-fragment.js';
import { mockResponse } from './mock-response.js';
import { retry } from './retry.js';
import { returnResponse } from './return-response.js';
import { rewriteUri } from './rewrite-uri.js';
import { setBackendService } from './set-backend-service.js';
import { setBody } from './set-body.js';
import { setHeader } from './set-header.js';
import { setMethod } from './set-method.js';
import { setQueryParameter } from './set-query-parameter.js';
import { setStatus } from './set-status.js';
import { setVariable } from './set-variable.js';
import { trace } from './trace.js';

export const ELEMENT_LIST: readonly ElementDefinition[] = [
  setVariable,
  choose,
  setHeader,
  setQueryParameter,
  rewriteUri,
  setMethod,
  setStatus,
  setBody,
  returnResponse,
  mockResponse,
  setBackendService,
  includeFragment,
  trace,
  forwardRequest,
  retry,
];

export const ELEMENTS: ReadonlyMap<string, ElementDefinition> = new Map(ELEMENT_LIST.map((e) => [e.name, e]));

export const DECLARED: ReadonlyMap<string, DeclaredElement> = new Map(
  DECLARED_ELEMENTS.filter((d) => !ELEMENTS.has(d.name)).map((d) => [d.name, d]),
);
