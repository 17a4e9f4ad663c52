/** A single-choice list (currency, language): each option is a radio button that fires at once. */
export function OptionList<T extends string>({
  label,
  options,
  selected,
  onSelect,
}: {
  label: string;
  options: { value: T; title: string; detail?: string }[];
  selected: T;
  onSelect: (value: T) => void;
}) {
  return (
    <div role="radiogroup" aria-label={label} className="card flex flex-col p-0 overflow-hidden">
      {options.map((option) => {
        const checked = option.value === selected;
        return (
          <button
            key={option.value}
            type="button"
            role="radio"
            aria-checked={checked}
            onClick={() => onSelect(option.value)}
            className="flex items-center justify-between gap-3 px-4 min-h-14 bg-transparent border-0 border-b border-line border-solid last:border-b-0 text-fg text-base text-left cursor-pointer"
          >
            <span className="flex flex-col">
              <span className="font-600">{option.title}</span>
              {option.detail && <span className="text-sm text-muted">{option.detail}</span>}
            </span>
            <span
              aria-hidden="true"
              className={`w-5 h-5 rounded-full border-2 border-solid flex items-center justify-center ${checked ? 'border-primary' : 'border-line'}`}
            >
              {checked && <span className="w-2.5 h-2.5 rounded-full bg-primary" />}
            </span>
          </button>
        );
      })}
    </div>
  );
}
