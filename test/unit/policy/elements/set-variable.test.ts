import { describe, expect, it } from 'vitest';
import { inbound } from '../../../doubles/policy-services.js';

describe('set-variable', () => {
  it('stores a literal as a string', async () => {
    const { context } = await inbound('<set-variable name="a" value="42" />');
    expect(context.variables.get('a')).toBe('42');
  });

  it("stores an expression's value as it is (an int stays an int)", async () => {
    const { context } = await inbound(
      '<set-variable name="n" value="@(40 + 2)" /><set-variable name="b" value="@(true)" />',
    );
    expect(context.variables.get('n')).toBe(42);
    expect(context.variables.get('b')).toBe(true);
  });

  it('lets later statements read earlier variables', async () => {
    const { context } = await inbound(
      '<set-variable name="a" value="x" /><set-variable name="b" value="@((string)context.Variables["a"] + "y")" />',
    );
    expect(context.variables.get('b')).toBe('xy');
  });

  it('sends a failing expression to on-error with ExpressionValueEvaluationFailure', async () => {
    const { context, outcome } = await inbound(
      '<set-variable id="v" name="a" value="@((string)context.Variables["missing"])" />',
    );
    expect(outcome.kind).toBe('respond');
    expect(context.lastError?.reason).toBe('ExpressionValueEvaluationFailure');
    expect(context.lastError?.source).toBe('set-variable');
    expect(context.lastError?.policyId).toBe('v');
    expect(context.lastError?.path).toBe('set-variable');
  });
});
