import { useStore } from '@nanostores/react';
import { $t } from '../../../stores/i18n.ts';
import { sendFlow } from '../../../stores/send.ts';
import { Spinner } from '../../ui/spinner.tsx';
import { SendProgressScreen } from './progress.tsx';
import { SendReviewScreen } from './review.tsx';
import { SendScreen } from './send.tsx';

/** The send flow (SPEC §2, §4): form, then review, then in progress; one chunk, loaded when the flow opens. */
export function SendArea({ route }: { route: 'send' | 'sendReview' | 'sendProgress' }) {
  const t = useStore($t);
  const flow = useStore(sendFlow.$current);
  if (!flow) return <Spinner label={t('common_loading')} />;
  if (route === 'sendReview') return <SendReviewScreen flow={flow} />;
  if (route === 'sendProgress') return <SendProgressScreen flow={flow} />;
  return <SendScreen flow={flow} />;
}
