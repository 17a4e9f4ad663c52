/**
 * A code of `length` characters in as many cells (issue 19 item 20): one real input lies over the cells, so
 * typing, pasting, the phone's one-time-code suggestion, Backspace and screen readers all work as in a plain field;
 * the cells only draw what it holds and where the caret is.
 */
export function CodeInput({ value, onChange, length, label, disabled, autoFocus, testId }: { value: string; onChange: (value: string) => void; length: number; label: string; disabled?: boolean; autoFocus?: boolean; testId?: string }) {
  const chars = value.slice(0, length).split('');
  return (
    <div className="code-input relative flex justify-center gap-3" data-filled={chars.length}>
      {Array.from({ length }, (_, index) => (
        <span key={index} aria-hidden="true" className={`code-cell ${index === Math.min(chars.length, length - 1) && !disabled ? 'code-cell-active' : ''}`}>
          {chars[index] ?? ''}
        </span>
      ))}
      <input
        className="code-input-field"
        aria-label={label}
        autoComplete="one-time-code"
        autoCapitalize="characters"
        spellCheck={false}
        inputMode="text"
        maxLength={length}
        value={value}
        disabled={disabled}
        autoFocus={autoFocus}
        onChange={(event) => onChange(event.target.value)}
        data-testid={testId}
      />
    </div>
  );
}
