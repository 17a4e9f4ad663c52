/** Search: a user by e-mail, user or account id, Telegram id, deposit address or transaction hash. */
import { useState } from 'react';
import { Button, Go, Input, Refusal, Section, Table, useAction, useConsole } from '../ui.tsx';

type Hit = { userId: string; email: string | null; accountId: string; matchedBy: string; detail: string | null };

export function SearchScreen() {
  const { t, call } = useConsole();
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState<Hit[]>();
  const action = useAction();
  const search = () => action.run(async () => setHits((await call<{ hits: Hit[] }>('GET', `/search?q=${encodeURIComponent(query)}`)).hits));
  return (
    <Section title={t('search_title')}>
      <form
        className="flex gap-2 items-end"
        onSubmit={(e) => {
          e.preventDefault();
          void search();
        }}
      >
        <Input label={t('search_label')} placeholder={t('search_placeholder')} value={query} onChange={setQuery} testId="search-query" />
        <Button onClick={() => void search()} disabled={action.busy || query.trim() === ''} testId="search-submit">
          {t('search_submit')}
        </Button>
      </form>
      <Refusal error={action.error} />
      {hits && (
        <Table
          testId="search-hits"
          head={['user_email', 'user_account', 'search_matched_by']}
          empty="search_nothing"
          rows={hits.map((hit) => [
            <Go to={`/operator/users/${hit.userId}`} testId="search-hit">
              {hit.email ?? hit.userId}
            </Go>,
            hit.accountId,
            `${t(`search_by_${hit.matchedBy}` as Parameters<typeof t>[0])}${hit.detail ? ` (${hit.detail})` : ''}`,
          ])}
        />
      )}
    </Section>
  );
}
