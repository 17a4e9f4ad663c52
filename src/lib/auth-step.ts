// Pure data shared by the sign-up and reset forms' script and the pages they lead to.
/**
 * The sign-up and reset forms say, for a few minutes, that their step succeeded: the 'check mail' and 'password
 * changed' pages show only then (issue 33 item 1); opened by their address they go back to their flow's start.
 */
export const AUTH_STEP_COOKIE = 'auth_step';
export type AuthStep = 'signup' | 'reset';
export const AUTH_STEP_PAGES: Readonly<Record<AuthStep, { done: string; start: string }>> = {
  signup: { done: '/auth/signup/email/success', start: '/auth/signup' },
  reset: { done: '/auth/forgot-success', start: '/auth/forgot' },
};

export function authStepCookie(step: AuthStep | null): string {
  return `${AUTH_STEP_COOKIE}=${step ? `${step}; Max-Age=600` : '; Max-Age=0'}; Path=/auth; SameSite=Strict`;
}
