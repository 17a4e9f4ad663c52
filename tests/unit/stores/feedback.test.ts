import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as UserApi from '../../../src/api/user.ts';
import { setPlatform } from '../../../src/platform/platform.ts';
import { testPlatform } from '../../../src/platform/test.ts';

const api = vi.hoisted(() => ({ leaveFeedback: vi.fn(), getClientConfig: vi.fn() }));
vi.mock('../../../src/api/user.ts', async (original) => ({ ...(await original<typeof UserApi>()), ...api }));

setPlatform(testPlatform());
const { $profile } = await import('../../../src/stores/user.ts');
const feedback = await import('../../../src/stores/feedback.ts');

/** 'Leave feedback' (SPEC §2 Settings, issue 19 item 3): the form's rules. */
describe('leave feedback', () => {
  beforeEach(() => {
    setPlatform(testPlatform());
    api.leaveFeedback.mockReset();
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
    api.leaveFeedback.mockResolvedValue({ id: 'f-1' });
    await feedback.sendFeedback();
    expect(api.leaveFeedback).toHaveBeenCalledWith('Great app', null);
    expect(feedback.$feedback.get()).toMatchObject({ sent: true, text: '' });
  });
});
