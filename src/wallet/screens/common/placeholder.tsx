import { useStore } from '@nanostores/react';
import { $t } from '../../../stores/i18n.ts';

/** Stands where a later issue builds the screen. */
export function PlaceholderScreen({ title }: { title: string }) {
  const t = useStore($t);
  return (
    <div className="screen">
      <h1 className="text-2xl font-700 m-0">{title}</h1>
      <p className="text-muted m-0">{t('wallet_screen_soon')}</p>
    </div>
  );
}
