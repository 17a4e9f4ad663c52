import type { Translate } from '../../stores/i18n.ts';
import { Icon } from './icon.tsx';
import { getPagePath } from '@nanostores/router';
import { $router, type Section } from '../../stores/router.ts';

/** The bottom navigation (SPEC §1): Home, Exchange (soon), Notify (soon), Settings; every tab is a wallet path. */
export function BottomNav({ t, active }: { t: Translate; active: Section | undefined }) {
  const items = [
    { id: 'home', icon: 'home', href: getPagePath($router, 'home'), label: t('nav_home'), soon: false },
    { id: 'exchange', icon: 'exchange', href: getPagePath($router, 'exchange'), label: t('nav_exchange'), soon: true },
    { id: 'notifications', icon: 'bell', href: getPagePath($router, 'notifications'), label: t('nav_notify'), soon: true },
    { id: 'settings', icon: 'settings', href: getPagePath($router, 'settings'), label: t('nav_settings'), soon: false },
  ] as const;
  return (
    <nav className="bottom-nav" aria-label="Main">
      {items.map((item) => (
        <a
          key={item.id}
          href={item.href}
          className={`bottom-nav-item ${item.id === active ? 'active' : ''}`}
          aria-current={item.id === active ? 'page' : undefined}
        >
          <Icon name={item.icon} size={22} />
          <span>{item.label}</span>
          {item.soon && <small className="bottom-nav-soon">{t('common_soon')}</small>}
        </a>
      ))}
    </nav>
  );
}
