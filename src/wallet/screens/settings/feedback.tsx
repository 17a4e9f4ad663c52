import { useStore } from '@nanostores/react';
import { getPagePath } from '@nanostores/router';
import { useEffect } from 'react';
import { $canSendFeedback, $feedback, $feedbackEmail, FEEDBACK_MAX_LENGTH, resetFeedback, sendFeedback, setFeedbackEmail, setFeedbackText } from '../../../stores/feedback.ts';
import { $t } from '../../../stores/i18n.ts';
import { $router } from '../../../stores/router.ts';
import { Glyph } from '../../ui/glyph.tsx';
import { MainAction } from '../../ui/main-action.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';

/** /settings/feedback (SPEC §2 'leave feedback'): a message and the address support answers to, prefilled. */
export function FeedbackScreen() {
  const t = useStore($t);
  const state = useStore($feedback);
  const email = useStore($feedbackEmail);
  const canSend = useStore($canSendFeedback);
  useEffect(() => resetFeedback, []);
  const back = getPagePath($router, 'settings');
  if (state.sent) {
    return (
      <div className="screen items-center text-center" data-testid="feedback-sent">
        <span className="mt-10 w-20 h-20 rounded-full bg-surface inline-flex items-center justify-center text-success">
          <Glyph name="plane" size={36} />
        </span>
        <h1 className="text-2xl font-700 m-0">{t('feedback_sent_title')}</h1>
        <p className="m-0 text-muted">{t('feedback_sent_text')}</p>
        <a href={back} className="btn-primary w-full no-underline mt-auto">
          {t('feedback_done')}
        </a>
      </div>
    );
  }
  return (
    <div className="screen" data-testid="feedback">
      <ScreenHeader title={t('feedback_title')} back={back} backLabel={t('common_back')} />
      <p className="m-0 text-muted">{t('feedback_text')}</p>
      <label className="flex flex-col gap-2">
        <span className="text-sm text-muted">{t('feedback_message')}</span>
        <textarea
          className="field h-auto min-h-36 py-3 resize-y leading-normal"
          value={state.text}
          maxLength={FEEDBACK_MAX_LENGTH}
          onChange={(event) => setFeedbackText(event.target.value)}
          data-testid="feedback-message"
        />
        <span className="text-xs text-muted self-end">{t('feedback_count', { count: state.text.length, max: FEEDBACK_MAX_LENGTH })}</span>
      </label>
      <label className="flex flex-col gap-2">
        <span className="text-sm text-muted">{t('feedback_email')}</span>
        <input className="field" type="email" inputMode="email" autoComplete="email" value={email} onChange={(event) => setFeedbackEmail(event.target.value)} data-testid="feedback-email" />
      </label>
      <div className="mt-auto">
        <MainAction label={t('feedback_send')} onClick={() => void sendFeedback()} disabled={!canSend} busy={state.busy} />
      </div>
    </div>
  );
}
