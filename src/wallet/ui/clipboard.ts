/** Writes text to the clipboard (a secure origin's async clipboard: https, localhost, or the mini app's webview). */
export async function writeClipboard(text: string): Promise<void> {
  if (!navigator.clipboard?.writeText) throw new Error('no clipboard on this origin');
  await navigator.clipboard.writeText(text);
}
