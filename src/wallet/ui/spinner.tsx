/** SPEC §9: the spinner is 64 px. */
export function Spinner({ size = 64, label }: { size?: number; label: string }) {
  return (
    <div role="status" aria-label={label} className="flex items-center justify-center">
      <span
        className="block rounded-full border-4 border-line border-t-primary"
        style={{ width: size, height: size, animation: 'spin 0.8s linear infinite' }}
      />
    </div>
  );
}

/** The branded full-screen spinner of a full load (SPEC §2): drawn as the page shell's AppSpinner.astro draws it. */
export function FullScreenSpinner({ label, name }: { label: string; name: string }) {
  return (
    <div className="brand-spinner" role="status" aria-label={label} data-testid="app-spinner">
      <span className="brand-spinner-ring">
        <span className="brand-spinner-mark">
          <svg width="26" height="26" viewBox="0 0 64 64" aria-hidden="true"><path d="M16 22h32a4 4 0 0 1 4 4v18a4 4 0 0 1-4 4H16a4 4 0 0 1-4-4V26a4 4 0 0 1 4-4z" fill="currentColor"/><path d="M12 26l26-10a3 3 0 0 1 4 3v3" fill="none" stroke="currentColor" strokeWidth="4"/></svg>
        </span>
      </span>
      <span className="brand-spinner-name" aria-hidden="true">
        {name}
      </span>
    </div>
  );
}
