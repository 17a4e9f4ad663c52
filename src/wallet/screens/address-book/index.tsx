import { Select } from '../../ui/select.tsx';
import { useStore } from '@nanostores/react';
import { getPagePath } from '@nanostores/router';
import { $addressBook, $addressBookEntry, $addressNetworks, addressEntryFlow, addressFormFlow, deleteAddress, networkTitle, type AddressFormVisit } from '../../../stores/address-book.ts';
import { $t } from '../../../stores/i18n.ts';
import { $router } from '../../../stores/router.ts';
import { Glyph } from '../../ui/glyph.tsx';
import { MainAction } from '../../ui/main-action.tsx';
import { Address } from '../../ui/address.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { ListSkeleton } from '../../ui/skeleton.tsx';
import { Spinner } from '../../ui/spinner.tsx';
import { AddressCautionNotice } from '../../ui/address-caution.tsx';

export type AddressBookRoute = 'addressBook' | 'addressBookCreate' | 'addressBookItem' | 'addressBookEdit' | 'addressBookDelete';

/** Settings → address book (SPEC §2): list, create, a read-only detail with a delete icon, delete. Only add and delete exist. */
export function AddressBookArea({ route }: { route: AddressBookRoute }) {
  if (route === 'addressBookCreate') return <CreateArea />;
  if (route === 'addressBookItem' || route === 'addressBookEdit') return <DetailScreen />;
  if (route === 'addressBookDelete') return <DeleteScreen />;
  return <ListScreen />;
}

function ListScreen() {
  const t = useStore($t);
  const book = useStore($addressBook);
  return (
    <div className="screen" data-testid="address-book">
      <ScreenHeader title={t('address_book_title')} back={getPagePath($router, 'settings')} backLabel={t('common_back')} />
      {!book.data ? (
        book.error !== undefined ? <p className="card m-0 text-muted">{t('common_something_went_wrong')}</p> : <ListSkeleton rows={3} label={t('common_loading')} testId="address-book-skeleton" />
      ) : book.data.length === 0 ? (
        <div className="card flex flex-col items-center gap-2 py-8 text-muted" data-testid="address-book-empty">
          <Glyph name="wallet" size={28} />
          <span>{t('address_book_empty')}</span>
        </div>
      ) : (
        <div className="list-card">
          {book.data.map((entry) => (
            <a key={entry.id} href={getPagePath($router, 'addressBookItem', { id: entry.id })} className="asset-row" data-testid="address-book-item">
              <span className="flex-1 min-w-0 flex flex-col">
                <span className="font-600 truncate">{entry.name}</span>
                <span className="text-sm text-muted">
                  {networkTitle(entry.blockchain)} · <Address value={entry.address} short />
                </span>
              </span>
              <Glyph name="chevron" size={18} className="text-muted shrink-0" />
            </a>
          ))}
        </div>
      )}
      <a href={getPagePath($router, 'addressBookCreate')} className="btn-primary no-underline" data-testid="address-book-add">
        <Glyph name="plus" size={18} />
        {t('address_book_add')}
      </a>
    </div>
  );
}

function CreateArea() {
  const t = useStore($t);
  const flow = useStore(addressFormFlow.$current);
  return flow ? <CreateScreen flow={flow} /> : <Spinner label={t('common_loading')} />;
}

function CreateScreen({ flow }: { flow: AddressFormVisit }) {
  const t = useStore($t);
  const form = useStore(flow.$addressForm);
  const networks = useStore($addressNetworks);
  const error = useStore(flow.$addressFormError);
  const canSave = useStore(flow.$canSaveAddress);
  return (
    <div className="screen" data-testid="address-book-create">
      <ScreenHeader title={t('address_book_create_title')} back={getPagePath($router, 'addressBook')} backLabel={t('common_back')} />
      <form
        className="flex flex-col gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          void flow.saveAddress();
        }}
      >
        <label className="flex flex-col gap-1">
          <span className="text-sm text-muted">{t('address_book_name')}</span>
          <input className="field" maxLength={64} value={form.name} onChange={(event) => flow.editAddressForm({ name: event.target.value })} data-testid="address-name" />
        </label>
        <label className="flex flex-col gap-1">
          <span className="text-sm text-muted">{t('address_book_network')}</span>
          <Select value={form.network} onChange={(network) => flow.editAddressForm({ network })} label={t('address_book_choose_network')} testId="address-network">
            {networks.map((option) => (
              <option key={option.value} value={option.value}>
                {option.title}
              </option>
            ))}
          </Select>
        </label>
        <label className="flex flex-col gap-1">
          <span className="text-sm text-muted">{t('address_book_address')}</span>
          <textarea
            className="field h-auto min-h-12 py-3 font-mono text-sm resize-none break-all"
            rows={2}
            spellCheck={false}
            value={form.address}
            onChange={(event) => flow.editAddressForm({ address: event.target.value })}
            aria-invalid={error !== null}
            data-testid="address-value"
          />
          {error && (
            <span className="text-sm text-danger" role="alert" data-testid="address-error">
              {t(error)}
            </span>
          )}
        </label>
        {!error && form.caution && form.cautionFor !== null && <AddressCautionNotice caution={form.caution} acknowledged={form.cautionAcknowledged} onAcknowledge={flow.acknowledgeCaution} />}
        <MainAction label={t('send_save')} onClick={() => void flow.saveAddress()} disabled={!canSave} busy={form.busy} />
      </form>
    </div>
  );
}

function DetailScreen() {
  const t = useStore($t);
  const entry = useStore($addressBookEntry);
  const page = useStore($router);
  const id = page && 'id' in page.params ? page.params.id : '';
  // SPEC §2: only add and delete exist; the entry flow turns an edit link into the read-only detail.
  useStore(addressEntryFlow.$current);
  return (
    <div className="screen" data-testid="address-book-detail">
      <div className="flex items-center justify-between gap-2">
        <ScreenHeader title={entry.data?.name ?? t('address_book_title')} back={getPagePath($router, 'addressBook')} backLabel={t('common_back')} />
        {entry.data && (
          <a href={getPagePath($router, 'addressBookDelete', { id })} className="inline-flex items-center justify-center w-10 h-10 rounded-full text-danger" aria-label={t('address_book_delete')} data-testid="address-delete">
            <TrashIcon />
          </a>
        )}
      </div>
      {!entry.data ? (
        entry.error !== undefined ? <p className="card m-0 text-muted">{t('address_book_not_found')}</p> : <Spinner label={t('common_loading')} />
      ) : (
        <dl className="card m-0 flex flex-col gap-3">
          <Field label={t('address_book_name')} value={entry.data.name} />
          <Field label={t('address_book_network')} value={networkTitle(entry.data.blockchain)} />
          <div className="flex flex-col gap-1">
            <dt className="text-sm text-muted">{t('address_book_address')}</dt>
            <dd className="m-0" data-testid="address-book-address">
              <Address value={entry.data.address} />
            </dd>
          </div>
        </dl>
      )}
    </div>
  );
}

function DeleteScreen() {
  const t = useStore($t);
  const entry = useStore($addressBookEntry);
  const page = useStore($router);
  const id = page && 'id' in page.params ? page.params.id : '';
  return (
    <div className="screen" data-testid="address-book-delete">
      <ScreenHeader title={t('address_book_delete_title')} back={getPagePath($router, 'addressBookItem', { id })} backLabel={t('common_back')} />
      {entry.data ? (
        <>
          <p className="card m-0">{t('address_book_delete_text', { name: entry.data.name })}</p>
          <button type="button" className="btn w-full bg-danger text-white" onClick={() => void deleteAddress(id)} data-testid="address-delete-confirm">
            {t('address_book_delete')}
          </button>
        </>
      ) : entry.error !== undefined ? (
        <p className="card m-0 text-muted">{t('address_book_not_found')}</p>
      ) : (
        <Spinner label={t('common_loading')} />
      )}
    </div>
  );
}

function Field({ label, value }: { label: string; value: string }) {
  return (
    <div className="flex flex-col gap-1">
      <dt className="text-sm text-muted">{label}</dt>
      <dd className="m-0 font-600 break-all">{value}</dd>
    </div>
  );
}

function TrashIcon() {
  return (
    <svg width={22} height={22} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
      <path d="M3 6h18M8 6V4h8v2M6 6l1 14h10l1-14M10 11v6M14 11v6" />
    </svg>
  );
}
