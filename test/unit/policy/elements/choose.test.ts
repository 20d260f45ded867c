import { describe, expect, it } from 'vitest';
import { inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

const doc = (method: string) =>
  inbound(
    `<choose>
       <when condition="@(context.Request.Method == &quot;POST&quot;)"><set-variable name="r" value="post" /></when>
       <when condition="@(context.Request.Method.StartsWith("P"))"><set-variable name="r" value="p" /></when>
       <otherwise><set-variable name="r" value="other" /></otherwise>
     </choose>`,
    { method },
  );

describe('choose', () => {
  it('runs the first true when, and only that one', async () => {
    expect((await doc('POST')).context.variables.get('r')).toBe('post');
    expect((await doc('PUT')).context.variables.get('r')).toBe('p');
  });

  it('runs otherwise when no condition holds', async () => {
    expect((await doc('GET')).context.variables.get('r')).toBe('other');
  });

  it('does nothing without otherwise when no condition holds', async () => {
    const { context } = await inbound(
      '<choose><when condition="false"><set-variable name="r" value="x" /></when></choose>',
    );
    expect(context.variables.has('r')).toBe(false);
  });

  it('does not evaluate later conditions once one is true', async () => {
    const { context, outcome } = await inbound(
      '<choose><when condition="true"><set-variable name="r" value="1" /></when><when condition="@((bool)context.Variables[&quot;nope&quot;])" /></choose>',
    );
    expect(outcome.kind).toBe('forward');
    expect(context.variables.get('r')).toBe('1');
  });

  it('rejects when after otherwise and a non-boolean literal condition', () => {
    expect(diagnosticsOf('<choose><otherwise /><when condition="true" /></choose>')).toEqual([
      'policies/inbound/choose[1]/when[2]: <when> must come before <otherwise>, got <when> after it',
    ]);
    expect(diagnosticsOf('<choose><when condition="yes" /></choose>')).toEqual([
      'policies/inbound/choose[1]/when[1]: when/@condition must be true or false, got "yes"',
    ]);
  });
});
