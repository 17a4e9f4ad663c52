import type { Translate } from '../../stores/i18n.ts';
import { Icon } from './icon.tsx';
import { getPagePath } from '@nanostores/router';
import { $router } from '../../stores/router.ts';
import { PAGES } from '../../lib/routes.ts';

/** The same navigation the shells render; Exchange and Notify are separate 'soon' pages. */
export function BottomNav({ t, active }: { t: Translate; active: 'home' | 'settings' | undefined }) {
  const items = [
    { id: 'home', icon: 'home', href: getPagePath($router, 'home'), label: t('nav_home'), soon: false },
    { id: 'exchange', icon: 'exchange', href: PAGES.exchange, label: t('nav_exchange'), soon: true },
    { id: 'notifications', icon: 'bell', href: PAGES.notifications, label: t('nav_notify'), soon: true },
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
          // The 'soon' tabs are separate pages: the router must let the browser load them.
          rel={item.soon ? 'external' : undefined}
        >
          <Icon name={item.icon} size={22} />
          <span>{item.label}</span>
          {item.soon && <small className="bottom-nav-soon">{t('common_soon')}</small>}
        </a>
      ))}
    </nav>
  );
}
