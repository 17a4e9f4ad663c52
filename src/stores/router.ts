import { createRouter } from '@nanostores/router';
import { ROUTES } from '../lib/routes.ts';

export { ROUTES };

export type RouteName = keyof typeof ROUTES;

export const $router = createRouter(ROUTES);

/** Where the bottom navigation marks a route as belonging. */
export function sectionOf(route: RouteName | undefined): 'home' | 'settings' | undefined {
  if (!route) return undefined;
  return route === 'settings' || ROUTES[route].startsWith(`${ROUTES.settings}/`) ? 'settings' : 'home';
}
