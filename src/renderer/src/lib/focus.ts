/**
 * Focuses what `find` returns once it is in the page (a new row comes with the refetch that follows
 * an action), trying each frame for up to `within` ms. Returns a function that stops trying.
 */
export function focusWhenReady(find: () => HTMLElement | null | undefined, within = 3_000): () => void {
  const until = performance.now() + within;
  let frame = 0;
  const attempt = () => {
    const element = find();
    if (element && element.isConnected) {
      element.focus();
      if (document.activeElement === element) return;
    }
    if (performance.now() < until) frame = requestAnimationFrame(attempt);
  };
  frame = requestAnimationFrame(attempt);
  return () => cancelAnimationFrame(frame);
}

/** After a submit the fields refused: the focus goes to the first field marked invalid in `form`. */
export function focusFirstInvalid(form: HTMLElement | null, within = 1_000): () => void {
  return focusWhenReady(() => form?.querySelector<HTMLElement>('[aria-invalid="true"]'), within);
}
