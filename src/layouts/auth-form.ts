import { EMAIL_PATTERN } from '../lib/email.ts';
import { AUTH_STEP_PAGES, authStepCookie, type AuthStep } from '../lib/auth-step.ts';

/**
 * The few behaviours the auth shells need without a framework (each shell's JS stays under 5 KB): the submit
 * button stays disabled until every required field is filled and e-mails match the pattern of SPEC §5,
 * password fields can be shown, and the forms talk to the gateway with plain fetch.
 */

type Answer = { ok: boolean; code?: string };

/** POST to the gateway; never throws, a network failure is just not ok. */
async function post(path: string, body: Record<string, string>): Promise<Answer> {
  try {
    const response = await fetch(`/api${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      credentials: 'include',
    });
    if (response.ok) return { ok: true };
    const error = (await response.json().catch(() => ({}))) as { exceptionCode?: string };
    return { ok: false, code: error.exceptionCode };
  } catch {
    return { ok: false };
  }
}

/** SPEC §9: an error toast for 2 s, cleared 300 ms later, with the shared .toast classes. */
function toast(text: string): void {
  document.querySelector('.toast')?.remove();
  const element = document.createElement('div');
  element.className = 'toast toast-error';
  element.setAttribute('role', 'alert');
  element.dataset.testid = 'toast';
  element.textContent = text;
  document.body.append(element);
  setTimeout(() => element.classList.add('toast-leaving'), 2_000);
  setTimeout(() => element.remove(), 2_300);
}

const go = (path: string) => window.location.assign(path);

/** A step done: its page may say so (it shows only after this). */
const done = (step: AuthStep) => {
  document.cookie = authStepCookie(step);
  go(AUTH_STEP_PAGES[step].done);
};

/** The text for a refusal: a code the page has a clear message for (a weak password), else the form's own. */
function refusal(form: HTMLFormElement, code: string | undefined): string {
  const messages = JSON.parse(form.dataset.messages ?? '{}') as Record<string, string>;
  return (code && messages[code]) || form.dataset.error || '';
}

/** What each form does on submit: resolves with the gateway's answer. */
const actions: Record<string, (form: HTMLFormElement, data: Record<string, string>) => Promise<Answer>> = {
  signup: async (_form, data) => {
    const answer = await post('/user', { email: data.email ?? '', password: data.password ?? '', accountName: 'Account' });
    if (answer.ok) done('signup');
    return answer;
  },
  'reset-request': async (form, data) => {
    const answer = await post('/password-reset', { email: data.email ?? '' });
    if (answer.ok) {
      // SPEC §2: the same page turns into the 'check mail' screen.
      const page = form.closest('main');
      page?.querySelector<HTMLElement>('[data-step-form]')?.setAttribute('hidden', '');
      page?.querySelector<HTMLElement>('[data-step-done]')?.removeAttribute('hidden');
    }
    return answer;
  },
  'reset-confirm': async (form, data) => {
    const answer = await post('/password-reset/confirm', { password: data.password ?? '', confirmationCode: form.dataset.code ?? '' });
    if (answer.ok) done('reset');
    return answer;
  },
};

for (const form of document.querySelectorAll<HTMLFormElement>('form[data-auth-form]')) {
  const submit = form.querySelector<HTMLButtonElement>('button[type=submit]');
  const fields = [...form.querySelectorAll<HTMLInputElement>('input[required]')];
  const mismatch = form.querySelector<HTMLElement>('[data-mismatch]');
  let busy = false;
  const update = () => {
    let differs = false;
    const ok = fields.every((field) => {
      const value = field.value.trim();
      if (!value) return false;
      if (field.type === 'email') return EMAIL_PATTERN.test(value);
      const same = field.dataset.sameAs ? form.querySelector<HTMLInputElement>(`[name="${field.dataset.sameAs}"]`) : null;
      if (!same) return true;
      differs = same.value !== field.value;
      return !differs;
    });
    if (mismatch) mismatch.hidden = !differs;
    if (submit) submit.disabled = busy || !ok;
  };
  form.addEventListener('input', update);
  update();
  for (const toggle of form.querySelectorAll<HTMLButtonElement>('button[data-toggle-password]')) {
    toggle.addEventListener('click', () => {
      const input = form.querySelector<HTMLInputElement>(`[name="${toggle.dataset.togglePassword}"]`);
      if (!input) return;
      const show = input.type === 'password';
      input.type = show ? 'text' : 'password';
      toggle.setAttribute('aria-pressed', String(show));
      toggle.setAttribute('aria-label', show ? toggle.dataset.hide ?? '' : toggle.dataset.show ?? '');
    });
  }
  const action = actions[form.dataset.action ?? ''];
  if (action) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (busy || submit?.disabled) return;
      busy = true;
      update();
      // Passwords are taken as typed (spaces may be part of them); only the e-mail is trimmed.
      const data = Object.fromEntries([...new FormData(form)].map(([name, value]) => [name, String(value)]));
      if (data.email) data.email = data.email.trim();
      void action(form, data).then((answer) => {
        if (answer.ok && form.dataset.action !== 'reset-request') return; // leaving the page: the button stays off
        busy = false;
        update();
        if (!answer.ok) toast(refusal(form, answer.code));
      });
    });
  } else if (submit) {
    // The login form posts natively to the provider; a second click must not send it twice.
    form.addEventListener('submit', () => setTimeout(() => (submit.disabled = true)));
  }
}

/** Where the e-mail page keeps what was typed, for its next load in this tab (a refusal, a restarted sign-in). */
const LOGIN_EMAIL_KEY = 'wallet.login.email';

/** /auth/login/email, the provider's interaction page: keeps the e-mail typed, and restarts a sign-in the provider forgot. */
const login = document.querySelector<HTMLFormElement>('form[data-login]');
if (login) {
  const email = login.querySelector<HTMLInputElement>('input[name=email]');
  const kept = sessionStorage.getItem(LOGIN_EMAIL_KEY);
  if (email && !email.value && kept) {
    email.value = kept;
    email.dispatchEvent(new Event('input', { bubbles: true }));
    login.querySelector<HTMLInputElement>('input[name=password]')?.focus();
  }
  login.addEventListener('submit', () => email && sessionStorage.setItem(LOGIN_EMAIL_KEY, email.value.trim()));
  // A reload or an old link: the provider answers for a live interaction with this very page, else it restarts the sign-in.
  void fetch(`/oidc/interaction/${encodeURIComponent(login.dataset.login ?? '')}`, { method: 'HEAD', credentials: 'same-origin' }).then(
    (response) => {
      if (new URL(response.url).pathname !== '/auth/login/email') window.location.replace('/auth/login/start');
    },
    () => undefined,
  );
}

/** /auth/signup/confirm/:code confirms on load: success offers 'continue to log in', failure goes to login. */
const confirm = document.querySelector<HTMLElement>('[data-confirm]');
if (confirm) {
  void post('/confirmation/confirm', { confirmationCode: confirm.dataset.confirm ?? '' }).then((answer) => {
    if (!answer.ok) return window.location.replace('/auth/login?error=confirm');
    const title = document.querySelector('h1');
    if (title) title.textContent = confirm.dataset.title ?? '';
    confirm.hidden = false;
  });
}
