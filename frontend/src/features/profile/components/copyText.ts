/** Copies `text`; answers whether it worked (the clipboard needs a secure page and permission). */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}
