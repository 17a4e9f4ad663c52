import { useStore } from '@nanostores/react';
import { $t } from '../../../stores/i18n.ts';
import { Icon } from '../../ui/icon.tsx';

/** /exchange and /notifications (SPEC §1, §2): tabs marked 'soon', signed in like every wallet path (SPEC §6). */
export function ComingSoonScreen() {
  const t = useStore($t);
  return (
    <div className="screen items-center justify-center text-center gap-3 pt-24" data-testid="coming-soon">
      <Icon name="clock" size={56} className="text-muted" />
      <h1 className="text-2xl font-700 m-0">{t('common_coming_soon')}</h1>
      <p className="text-muted m-0">{t('common_coming_soon_text')}</p>
    </div>
  );
}
