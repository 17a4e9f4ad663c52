import { SendProgressScreen } from './progress.tsx';
import { SendReviewScreen } from './review.tsx';
import { SendScreen } from './send.tsx';

/** The send flow (SPEC §2, §4): form, then review, then in progress; one chunk, loaded when the flow opens. */
export function SendArea({ route }: { route: 'send' | 'sendReview' | 'sendProgress' }) {
  if (route === 'sendReview') return <SendReviewScreen />;
  if (route === 'sendProgress') return <SendProgressScreen />;
  return <SendScreen />;
}
