import { createRouter } from '@nanostores/router';
import { ROUTES } from '../lib/routes.ts';

export { ROUTES };

export type RouteName = keyof typeof ROUTES;

export const $router = createRouter(ROUTES);

export type Section = 'home' | 'exchange' | 'notifications' | 'settings';

/** Where the bottom navigation marks a route as belonging. */
export function sectionOf(route: RouteName | undefined): Section | undefined {
  if (!route) return undefined;
  if (route === 'exchange' || route === 'notifications') return route;
  return route === 'settings' || ROUTES[route].startsWith(`${ROUTES.settings}/`) ? 'settings' : 'home';
}
