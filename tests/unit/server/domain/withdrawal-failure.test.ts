import { describe, expect, it } from 'vitest';
import { withdrawalFailureCode } from '../../../../src/server/domain/withdrawals/view.ts';

describe("a failed withdrawal's reason as a code the client translates", () => {
  it('maps the sentences the worker writes today to codes', () => {
    expect(withdrawalFailureCode('The transaction failed on the chain: execution reverted')).toBe('FAILED_ON_CHAIN');
    expect(withdrawalFailureCode('The transaction left the chain')).toBe('DROPPED');
    // A broadcast refusal's message is the node's own text: whatever it says, the network refused it.
    expect(withdrawalFailureCode('bad-txns-inputs-missingorspent')).toBe('REJECTED');
  });

  it('takes a stored code as it is and has none without a reason', () => {
    expect(withdrawalFailureCode('DROPPED')).toBe('DROPPED');
    expect(withdrawalFailureCode('REJECTED')).toBe('REJECTED');
    expect(withdrawalFailureCode(' ')).toBe('UNKNOWN');
    expect(withdrawalFailureCode(null)).toBeNull();
  });
});
