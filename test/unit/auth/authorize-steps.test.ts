import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { AUTHORIZATION_FLOW } from '../../../src/auth/authorize/index.js';
import { pageHeaders } from '../../../src/auth/authorize/pages.js';
import {
  established,
  type FlowServices,
  runSteps,
  type Step,
  type StepResult,
} from '../../../src/auth/authorize/steps.js';

const services = {} as FlowServices;
const ctx = {} as Context;

function recording(name: string, result: StepResult, ran: string[]): Step {
  return {
    name,
    async run() {
      ran.push(name);
      return result;
    },
  };
}

describe('the authorization flow as lists of named steps', () => {
  it('runs the steps in order and stops at the first that answers', async () => {
    const ran: string[] = [];
    const handler = runSteps(
      'test',
      [recording('a', 'next', ran), recording('b', 'answered', ran), recording('c', 'answered', ran)],
      services,
    );
    await handler(ctx, async () => {});
    expect(ran).toEqual(['a', 'b']);
  });

  it('is a TypeError naming the endpoint when no step answers', async () => {
    const handler = runSteps('consent', [recording('a', 'next', [])], services);
    await expect(handler(ctx, async () => {})).rejects.toThrow(
      new TypeError('authorization flow: no step of consent answered'),
    );
  });

  it('is a TypeError naming the value when a step reads what no earlier step established', () => {
    expect(() => established({}, 'client')).toThrow(
      new TypeError('authorization flow: a step reads "client" before any step established it'),
    );
    expect(established({ redirectTarget: 'https://a.example/cb' }, 'redirectTarget')).toBe(
      'https://a.example/cb',
    );
  });

  it('gives every endpoint the page headers first and steps with distinct names', () => {
    for (const [endpoint, steps] of Object.entries(AUTHORIZATION_FLOW)) {
      expect(steps[0], endpoint).toBe(pageHeaders);
      const names = steps.map((step) => step.name);
      expect(new Set(names).size, endpoint).toBe(names.length);
    }
  });
});
