/** Telegram's published Ed25519 keys for third-party validation of mini app init data. */
export const TELEGRAM_PUBLIC_KEYS = {
  production: 'e7bf03a2fa4602af4580703d88dda5bb59f32ed8b02a56c187fe7d34caed242d',
  test: '40055058a4ee38156a06562e52eece92a771bcd8346a8c4615cb7376eddf72ec',
} as const;

/** How old init data may be, unless TELEGRAM_INIT_DATA_MAX_AGE says otherwise. */
export const DEFAULT_INIT_DATA_MAX_AGE_S = 3600;
