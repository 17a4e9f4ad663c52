/** The card sandbox's hosted payment pages: plain HTML rendered on the server, no script. */
import { CARD_SANDBOX_PATH, SANDBOX_CONFIRMATION_CODE, type PaymentRow } from './sandbox-payments.ts';
import { unitsFromRow } from '../../db/amounts.ts';

/** The amount as a payment page shows it: always two decimals. */
function money(payment: Pick<PaymentRow, 'amount' | 'currency'>): string {
  const cents = unitsFromRow(payment.amount);
  return `${cents / 100n}.${String(cents % 100n).padStart(2, '0')} ${payment.currency}`;
}

const escape = (text: string) => text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);

const STYLE = `
  :root { color-scheme: light dark; --bg: #f4f5f7; --card: #fff; --fg: #1d1d22; --muted: #6b6b76; --line: #dcdce3; --accent: #3b5bdb; --danger: #d9480f; }
  @media (prefers-color-scheme: dark) { :root { --bg: #16161a; --card: #202025; --fg: #f4f4f6; --muted: #a0a0ab; --line: #34343c; --accent: #748ffc; --danger: #ff8787; } }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
  main { max-width: 420px; margin: 0 auto; padding: 24px 16px 40px; display: flex; flex-direction: column; gap: 16px; }
  .badge { align-self: flex-start; font-size: 12px; font-weight: 700; letter-spacing: .06em; text-transform: uppercase; color: var(--muted); border: 1px solid var(--line); border-radius: 999px; padding: 2px 10px; }
  .card { background: var(--card); border: 1px solid var(--line); border-radius: 16px; padding: 16px; display: flex; flex-direction: column; gap: 12px; }
  h1 { font-size: 20px; margin: 0; } p { margin: 0; } .muted { color: var(--muted); font-size: 14px; }
  .amount { font-size: 32px; font-weight: 700; }
  label { display: flex; flex-direction: column; gap: 6px; font-size: 14px; font-weight: 600; }
  input { font: inherit; padding: 12px; border-radius: 12px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); width: 100%; }
  .row { display: flex; gap: 12px; } .row > * { flex: 1; min-width: 0; }
  button, .button { font: inherit; font-weight: 700; padding: 14px; border-radius: 12px; border: 0; background: var(--accent); color: #fff; cursor: pointer; text-align: center; text-decoration: none; width: 100%; }
  button.secondary { background: transparent; color: var(--fg); border: 1px solid var(--line); }
  .error { color: var(--danger); font-weight: 600; }
  table { border-collapse: collapse; font-size: 14px; } td { padding: 2px 8px 2px 0; } code { font-size: 13px; white-space: nowrap; }
`;

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title><style>${STYLE}</style></head><body><main><span class="badge">Sandbox card payment</span>${body}</main></body></html>`;
}

export function notFoundPage(): string {
  return layout('Payment not found', `<section class="card"><h1>Payment not found</h1><p class="muted">This payment link is not valid.</p></section>`);
}

function summary(payment: PaymentRow, merchant: string): string {
  const amount = money(payment);
  return `<section class="card" aria-label="Order">
    <p class="muted">Merchant</p><h1 data-testid="merchant">${escape(merchant)}</h1>
    <p class="muted">${escape(payment.description)}</p>
    <p class="amount" data-testid="amount">${escape(amount)}</p>
    ${payment.customer_email ? `<p class="muted">Paying as ${escape(payment.customer_email)}</p>` : ''}
  </section>`;
}

function testCards(): string {
  return `<section class="card" aria-label="Test cards"><p class="muted">Test cards: any future expiry (MM/YY), any CVC.</p><table>
    <tr><td><code>4242 4242 4242 4242</code></td><td>pays</td></tr>
    <tr><td><code>4000 0000 0000 0002</code></td><td>is declined</td></tr>
    <tr><td><code>4000 0000 0000 3220</code></td><td>asks for a confirmation code (${SANDBOX_CONFIRMATION_CODE})</td></tr>
  </table></section>`;
}

export function paymentPage(payment: PaymentRow, merchant: string, form: { error?: string; expiry?: string } = {}): string {
  const amount = money(payment);
  const error = form.error ? `<p class="error" role="alert">${escape(form.error)}</p>` : '';
  const back = `<a class="button" href="${escape(payment.return_url)}">Return to ${escape(merchant)}</a>`;
  if (payment.status === 'SUCCEEDED') {
    return layout('Payment received', `${summary(payment, merchant)}<section class="card"><h1>Payment received</h1><p class="muted">Card •••• ${escape(payment.card_last4 ?? '')}</p>${back}</section>`);
  }
  if (payment.status === 'FAILED' || payment.status === 'CANCELLED') {
    return layout('Payment failed', `${summary(payment, merchant)}<section class="card"><h1>Payment failed</h1><p class="error">${escape(payment.failure_reason ?? 'The payment did not go through.')}</p>${back}</section>`);
  }
  if (payment.expired) {
    return layout('Payment expired', `${summary(payment, merchant)}<section class="card"><h1>This payment has expired</h1>${back}</section>`);
  }
  if (payment.status === 'REQUIRES_ACTION') {
    return layout(
      'Confirm the payment',
      `${summary(payment, merchant)}<form class="card" method="post" action="${CARD_SANDBOX_PATH}/pay/${payment.id}/confirm">
        <h1>Confirm the payment</h1>
        <p class="muted">Your bank sent a one-time code for card •••• ${escape(payment.card_last4 ?? '')}. In the sandbox it is <strong>${SANDBOX_CONFIRMATION_CODE}</strong>.</p>
        ${error}
        <label>Confirmation code<input name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="8" required autofocus></label>
        <button type="submit" name="action" value="confirm">Confirm</button>
        <button type="submit" name="action" value="cancel" class="secondary" formnovalidate>Cancel payment</button>
      </form>`,
    );
  }
  return layout(
    `Pay ${amount}`,
    `${summary(payment, merchant)}<form class="card" method="post" action="${CARD_SANDBOX_PATH}/pay/${payment.id}" autocomplete="off">
      ${error}
      <label>Card number<input name="card" inputmode="numeric" placeholder="4242 4242 4242 4242" maxlength="23" required></label>
      <div class="row">
        <label>Expiry<input name="expiry" placeholder="MM/YY" maxlength="7" value="${escape(form.expiry ?? '')}" required></label>
        <label>CVC<input name="cvc" inputmode="numeric" placeholder="123" maxlength="4" required></label>
      </div>
      <button type="submit">Pay ${escape(amount)}</button>
    </form>${testCards()}`,
  );
}
