import { coinSubtitleOf } from '../../../lib/format.ts';
import { Switch } from '../../ui/switch.tsx';
import { useStore } from '@nanostores/react';
import { getPagePath } from '@nanostores/router';
import { $catalogue } from '../../../stores/catalogue.ts';
import { $t } from '../../../stores/i18n.ts';
import { manageAssetsFlow, type ManageAssetsVisit } from '../../../stores/manage-assets.ts';
import { FlowView } from '../../ui/flow-view.tsx';
import { $router } from '../../../stores/router.ts';
import { AssetRow } from '../../ui/asset-row.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { Spinner } from '../../ui/spinner.tsx';

/** /manage-assets: a toggle per active crypto asset; what is shown is kept on this device. */
export function ManageAssetsScreen() {
  return <FlowView flow={manageAssetsFlow}>{(flow) => <ManageScreen flow={flow} />}</FlowView>;
}

function ManageScreen({ flow }: { flow: ManageAssetsVisit }) {
  const t = useStore($t);
  const catalogue = useStore($catalogue);
  const assets = useStore(flow.$managedAssets);
  const toggling = useStore(flow.$toggling);
  return (
    <div className="screen" data-testid="manage-assets">
      <ScreenHeader title={t('manage_title')} back={getPagePath($router, 'home')} backLabel={t('common_back')} />
      <p className="m-0 text-sm text-muted">{t('manage_hint')}</p>
      {!catalogue.data ? (
        <Spinner size={32} label={t('common_loading')} />
      ) : (
        <div className="list-card">
          {assets.map(({ coin, shown }) => (
            <label key={coin.currency} className="block cursor-pointer">
              <AssetRow
                coin={coin}
                subtitle={coinSubtitleOf(coin)}
                end={
                  <Switch checked={shown} disabled={toggling === coin.currency} onChange={(on) => void flow.setAssetShown(coin.currency, on)} label={coin.name} testId={`toggle-${coin.currency}`} />
                }
              />
            </label>
          ))}
        </div>
      )}
    </div>
  );
}
