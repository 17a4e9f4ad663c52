import { addressGroups } from '../../lib/address.ts';

/**
 * An address wherever one is shown (receive, send review, details, address book; issue 33 item 4): the app's font, in
 * groups of four, the first and last four characters emphasised. The groups are spaced by margins, not spaces, so the
 * text selected or read by a test is the address itself. `short` shows SPEC §9's shortening in the same style.
 */
export function Address({ value, short = false, className = '', testId }: { value: string; short?: boolean; className?: string; testId?: string }) {
  return (
    <span className={`address ${className}`.trim()} data-testid={testId} data-address={value}>
      {addressGroups(value, short).map((group, index) => (
        <span key={index} className="address-group">
          {group.map((part, at) => (part.strong ? <strong key={at}>{part.text}</strong> : <span key={at}>{part.text}</span>))}
        </span>
      ))}
    </span>
  );
}
