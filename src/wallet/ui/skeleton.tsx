/**
 * The shape of a list while it loads (issue 33 item 4): grey rows where its items will be, instead of a blank card
 * or a lone spinner, so the screen does not jump when they arrive. Announced once as loading.
 */
export function ListSkeleton({ rows = 3, label, testId }: { rows?: number; label: string; testId: string }) {
  return (
    <div className="list-card" role="status" aria-label={label} aria-busy="true" data-testid={testId}>
      {Array.from({ length: rows }, (_, index) => (
        <div key={index} className="asset-row" aria-hidden="true">
          <span className="skeleton w-10 h-10 rounded-full shrink-0" />
          <span className="flex-1 min-w-0 flex flex-col gap-2">
            <span className="skeleton h-3.5 rounded-md" style={{ width: `${60 - index * 8}%` }} />
            <span className="skeleton h-3 w-1/4 rounded-md" />
          </span>
          <span className="skeleton h-3.5 w-16 rounded-md shrink-0" />
        </div>
      ))}
    </div>
  );
}

/** A line of text still loading (a balance, a title): one grey bar of the given size. */
export function LineSkeleton({ className }: { className: string }) {
  return <span className={`skeleton block rounded-lg ${className}`} aria-hidden="true" />;
}
