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

export function FullScreenSpinner({ label }: { label: string }) {
  return (
    <div className="fixed inset-0 flex items-center justify-center bg-bg z-20" data-testid="app-spinner">
      <Spinner label={label} />
    </div>
  );
}
