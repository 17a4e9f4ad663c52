/**
 * A screen's main action (continue to review, confirm, buy, sell): a full-width primary button in the browser.
 * Inside the Telegram mini app the platform layer shows the native main button in its place (SPEC §4, §6), so
 * every flow that uses this component gets that for free.
 */
export function MainAction({ label, onClick, disabled = false, busy = false }: { label: string; onClick: () => void; disabled?: boolean; busy?: boolean }) {
  return (
    <button type="button" className="btn-primary w-full" onClick={onClick} disabled={disabled || busy} aria-busy={busy}>
      {label}
    </button>
  );
}
