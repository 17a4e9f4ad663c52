import { beforeEach, describe, expect, it } from 'vitest';
import { setPlatform } from '../../../src/platform/platform.ts';
import { testPlatform } from '../../../src/platform/test.ts';
import { $profile } from '../../../src/stores/user.ts';
import * as feedback from '../../../src/stores/feedback.ts';
import { mockRequest } from '../../support/request-mock.ts';

const gateway = mockRequest();

/** 'Leave feedback' (SPEC §2 Settings, issue 19 item 3): the form's rules. */
describe('leave feedback', () => {
  beforeEach(() => {
    setPlatform(testPlatform());
    gateway.reset();
    feedback.resetFeedback();
    $profile.set({ data: { email: 'me@example.com', pinCodeActive: false, tgAuth: false, accounts: [] }, loading: false, error: null });
  });

  it("prefills the account's e-mail, and a messenger-only address counts as none", () => {
    expect(feedback.$feedbackEmail.get()).toBe('me@example.com');
    feedback.setFeedbackEmail('other@example.com');
    expect(feedback.$feedbackEmail.get()).toBe('other@example.com');
    feedback.resetFeedback();
    $profile.set({ data: { email: '123@tg.local', pinCodeActive: false, tgAuth: true, accounts: [] }, loading: false, error: null });
    expect(feedback.$feedbackEmail.get()).toBe('');
  });

  it('sends a message of 1 to 2000 characters with an e-mail or none, trimmed', async () => {
    expect(feedback.$canSendFeedback.get()).toBe(false);
    feedback.setFeedbackText('   ');
    expect(feedback.$canSendFeedback.get()).toBe(false);
    feedback.setFeedbackText('x'.repeat(2500));
    expect(feedback.$feedback.get().text).toHaveLength(2000);
    feedback.setFeedbackText('  Great app  ');
    feedback.setFeedbackEmail('not an address');
    expect(feedback.$canSendFeedback.get()).toBe(false);
    feedback.setFeedbackEmail('');
    expect(feedback.$canSendFeedback.get()).toBe(true);
    gateway.on('POST /user/feedback', { id: 'f-1' });
    await feedback.sendFeedback();
    expect(gateway.to('POST /user/feedback').map((sent) => sent.body)).toEqual([{ text: 'Great app', email: null }]);
    expect(feedback.$feedback.get()).toMatchObject({ sent: true, text: '' });
  });
});
