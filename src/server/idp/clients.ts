/** The operator console's OpenID client id: its page is /operator (http/operator.ts announces it, provider.ts registers it). */
export const OPERATOR_CLIENT_ID = 'operator-console';
