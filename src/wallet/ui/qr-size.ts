/** SPEC §9: the QR image is 200×200 (kept apart from the encoder so a placeholder can size itself without loading it). */
export const QR_SIZE = 200;
