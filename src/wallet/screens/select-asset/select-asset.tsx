import { useStore } from '@nanostores/react';
import { getPagePath } from '@nanostores/router';
import { $catalogue } from '../../../stores/catalogue.ts';
import { $t } from '../../../stores/i18n.ts';
import { $router } from '../../../stores/router.ts';
import { chooserFlow, type ChooserPurpose, type ChooserVisit } from '../../../stores/select-asset.ts';
import { FlowView } from '../../ui/flow-view.tsx';
import { Glyph } from '../../ui/glyph.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { Spinner } from '../../ui/spinner.tsx';
import { CoinChoiceList } from '../../ui/choice-list.tsx';

/** /select-asset/receive and /select-asset/send: active crypto assets not hidden on this device, with search. */
export function SelectAssetScreen({ purpose }: { purpose: ChooserPurpose }) {
  return <FlowView flow={chooserFlow}>{(flow) => <ChooserScreen purpose={purpose} flow={flow} />}</FlowView>;
}

function ChooserScreen({ purpose, flow }: { purpose: ChooserPurpose; flow: ChooserVisit }) {
  const t = useStore($t);
  const catalogue = useStore($catalogue);
  const items = useStore(flow.$chooserItems);
  const search = useStore(flow.$assetSearch);
  const choosing = useStore(flow.$choosing);
  return (
    <div className="screen" data-testid={`select-asset-${purpose}`}>
      <ScreenHeader title={t(purpose === 'receive' ? 'select_receive_title' : 'select_send_title')} back={getPagePath($router, 'home')} backLabel={t('common_back')} />
      <label className="relative block">
        <span className="sr-only">{t('select_search')}</span>
        <Glyph name="search" size={20} className="absolute left-4 top-3.5 text-muted pointer-events-none" />
        <input type="search" className="field pl-12" placeholder={t('select_search')} value={search} onChange={(event) => flow.$assetSearch.set(event.target.value)} autoComplete="off" />
      </label>
      <p className="m-0 text-sm text-muted">{t('select_asset_hint')}</p>
      {!catalogue.data ? (
        <Spinner size={32} label={t('common_loading')} />
      ) : items.length === 0 ? (
        <p className="card m-0 text-muted text-center" data-testid="nothing-found">
          {t('select_nothing_found')}
        </p>
      ) : (
        <CoinChoiceList items={items} onChoose={(currency) => void flow.chooseAsset(currency, purpose)} choosing={choosing} testId="chooser-item" />
      )}
    </div>
  );
}
