/**
 * The one toggle of the wallet (issue 19 item 20): a native checkbox with the switch role, styled by `.switch` in
 * theme.css (both themes), so labels, focus, Space and screen readers work as for any checkbox. Put it inside a
 * <label> with the text, or give it `label`.
 */
export function Switch({ checked, onChange, disabled, label, testId }: { checked: boolean; onChange: (checked: boolean) => void; disabled?: boolean; label?: string; testId?: string }) {
  return (
    <input
      type="checkbox"
      role="switch"
      className="switch"
      checked={checked}
      aria-checked={checked}
      disabled={disabled}
      aria-label={label}
      onChange={(event) => onChange(event.target.checked)}
      data-testid={testId}
    />
  );
}
