import { useStore } from '@nanostores/react';
import { $t } from '../../../stores/i18n.ts';
import { $selectedLanguage } from '../../../stores/settings.ts';
import { chooseLanguage } from '../../../stores/user.ts';
import { OptionList } from '../../ui/option-list.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { getPagePath } from '@nanostores/router';
import { $router } from '../../../stores/router.ts';

export function SelectLanguageScreen() {
  const t = useStore($t);
  const selected = useStore($selectedLanguage);
  // Language names are written in their own language, so anyone can find theirs.
  const options = [
    { value: 'ENG' as const, title: t('common_english') },
    { value: 'RUS' as const, title: t('common_russian') },
  ];
  return (
    <div className="screen">
      <ScreenHeader title={t('settings_select_language_title')} back={getPagePath($router, 'settings')} backLabel={t('common_back')} />
      <OptionList label={t('settings_select_language_title')} options={options} selected={selected} onSelect={(language) => void chooseLanguage(language)} />
    </div>
  );
}
