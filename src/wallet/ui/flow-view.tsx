import { useStore } from '@nanostores/react';
import type { ReactNode } from 'react';
import type { Flow } from '../../stores/primitives/flow.ts';
import { $t } from '../../stores/i18n.ts';
import { Spinner } from './spinner.tsx';

/** Renders the open visit of a flow (its screens read its stores); a spinner until the router has opened it. */
export function FlowView<T>({ flow, children }: { flow: Flow<T>; children: (visit: T) => ReactNode }) {
  const t = useStore($t);
  const visit = useStore(flow.$current);
  return visit ? children(visit) : <Spinner label={t('common_loading')} />;
}
