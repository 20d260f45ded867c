import { describe, expect, it } from 'vitest';
import type { BranchChoice, PolicyObserver } from '../../../src/policy/services.js';
import { fakeServices, inbound } from '../../doubles/policy-services.js';

/** What an observer of a run is told: each statement with where it was written and how it ended, each branch. */
function recordingObserver() {
  const events: string[] = [];
  const branches: BranchChoice[] = [];
  const observer: PolicyObserver = {
    observes: () => true,
    runStarted: (run) => {
      run.context.variables.set('seeded', 'yes');
      events.push('started');
    },
    statementStarted: (site) =>
      events.push(`> ${site.element} ${site.location.line}:${site.location.column}`),
    statementEnded: (site, _run, outcome) => events.push(`< ${site.element} ${outcome}`),
    branchTaken: (choice) => {
      branches.push(choice);
      events.push(`branch ${choice.taken}`);
    },
  };
  return { observer, events, branches };
}

describe('a pipeline observer', () => {
  it('is told of every statement with its position and outcome, and of the branch a choose took', async () => {
    const { observer, events, branches } = recordingObserver();
    const services = { ...fakeServices(), observer };
    const { context } = await inbound(
      `<choose>
        <when condition="@(context.Variables.GetValueOrDefault(&quot;seeded&quot;, &quot;&quot;) == &quot;no&quot;)" />
        <when condition="@((string)context.Variables[&quot;seeded&quot;] == &quot;yes&quot;)"><set-variable name="r" value="1" /></when>
        <otherwise />
      </choose>
      <check-header name="x-missing" failed-check-httpcode="401" failed-check-error-message="no" ignore-case="true" />`,
      {},
      services,
    );
    expect(context.variables.get('r')).toBe('1');
    expect(events).toEqual([
      'started',
      '> choose 2:10',
      'branch 1',
      '> set-variable 4:95',
      '< set-variable next',
      '< choose next',
      '> check-header 7:7',
      '< check-header refused',
    ]);
    expect(branches[0]).toMatchObject({ taken: 1, conditions: [false, true] });
    expect(branches[0]!.whens.map((w) => w.line)).toEqual([3, 4]);
    expect(branches[0]!.otherwise?.line).toBe(5);
  });

  it('leaves a run nobody observes as it was', async () => {
    const { context, outcome } = await inbound('<set-variable name="r" value="1" />');
    expect(context.variables.get('r')).toBe('1');
    expect(outcome.kind).toBe('forward');
  });
});
