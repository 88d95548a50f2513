// One mechanism for every layer over the window: the modal dialogs (Modal.tsx)
// and the two panels that open over it (the tour and the glossary). Opening a
// layer moves the focus into it; Escape closes the topmost layer; Tab stays
// inside a modal (it walked to the toolbar behind); closing gives the focus
// back to where it was (the button that opened it). Layers stack in the order
// they opened: Explore opened over Reproductions closes first.
import { useEffect, useRef, type RefObject } from 'react';

interface Layer {
  el: () => HTMLElement | null;
  close: () => void;
  /** A modal keeps Tab inside itself and owns every key; a panel leaves the window usable. */
  modal: boolean;
}

const layers: Layer[] = [];

/**
 * The controls that last had the focus (newest last), each with the menu button that opened it
 * when it was an item of a menu ("More"): a layer opened from a menu item finds that item gone (the
 * menu closes in the same update) and gives the focus back to the menu's button.
 */
const recentFocus: { el: HTMLElement; trigger: HTMLElement | null }[] = [];
if (typeof document !== 'undefined')
  document.addEventListener('focusin', (e) => {
    const el = e.target as HTMLElement;
    const menu = el.closest?.('[role="menu"]');
    recentFocus.push({
      el,
      trigger: menu?.parentElement?.querySelector<HTMLElement>('[aria-haspopup]') ?? null,
    });
    if (recentFocus.length > 8) recentFocus.shift();
  });

/** Where the focus goes back to when the layer `root` closes: the newest focus outside it (a control may autofocus inside it first). */
function focusToRestore(root: HTMLElement | null): { el: HTMLElement; trigger: HTMLElement | null } | null {
  const outside = (el: Element | null) => !!el && el !== document.body && !(root?.contains(el) ?? false);
  const active = document.activeElement;
  if (outside(active) && recentFocus.at(-1)?.el !== active)
    return { el: active as HTMLElement, trigger: null };
  for (let i = recentFocus.length - 1; i >= 0; i--) if (outside(recentFocus[i].el)) return recentFocus[i];
  return null;
}

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/** The controls Tab reaches inside `root`, in order (hidden ones left out). */
export function focusables(root: HTMLElement): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(FOCUSABLE)].filter(
    (el) => !el.closest('[hidden]') && (el.offsetParent !== null || el.getClientRects().length > 0),
  );
}

/** A modal dialog is open: the window's own shortcuts stay quiet behind it. */
export function modalOpen(): boolean {
  return layers.some((l) => l.modal);
}

function typingOutside(target: EventTarget | null, root: HTMLElement | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || (root && root.contains(el))) return false;
  return el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT';
}

function onKeyDown(e: KeyboardEvent): void {
  const top = layers.at(-1);
  if (!top) return;
  const root = top.el();
  if (e.key === 'Escape') {
    // A panel leaves Escape to a text field outside it (the filter's Escape leaves the filter).
    if (!top.modal && typingOutside(e.target, root)) return;
    // In a text area (a reproduction's draft) the first Escape leaves the text, the next closes:
    // one key press must not throw away an edit.
    if ((e.target as HTMLElement | null)?.tagName === 'TEXTAREA' && root?.contains(e.target as Node)) {
      e.preventDefault();
      e.stopPropagation();
      root.focus();
      return;
    }
    e.preventDefault();
    e.stopPropagation();
    top.close();
    return;
  }
  if (e.key !== 'Tab' || !top.modal || !root) return;
  const items = focusables(root);
  if (items.length === 0) {
    e.preventDefault();
    root.focus();
    return;
  }
  const first = items[0];
  const last = items[items.length - 1];
  const active = document.activeElement;
  if (e.shiftKey && (active === first || !root.contains(active))) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && (active === last || !root.contains(active))) {
    e.preventDefault();
    first.focus();
  }
}

/** Focus that lands behind the topmost modal (a click on the page, a script) is taken back into it. */
function onFocusIn(e: FocusEvent): void {
  const top = layers.at(-1);
  const root = top?.modal ? top.el() : null;
  if (!root || root.contains(e.target as Node)) return;
  (focusables(root)[0] ?? root).focus();
}

function listen(on: boolean): void {
  // Capture: the layer hears Escape before the window's shortcuts and a field's own handler.
  if (on) {
    document.addEventListener('keydown', onKeyDown, true);
    document.addEventListener('focusin', onFocusIn);
  } else {
    document.removeEventListener('keydown', onKeyDown, true);
    document.removeEventListener('focusin', onFocusIn);
  }
}

/**
 * Makes `ref`'s element a layer while `open`: focus moves in (its first control for a modal, the
 * element itself for a panel), Escape calls `onClose`, a modal traps Tab, and the focus goes back
 * where it was when the layer closes.
 */
export function useLayer(
  ref: RefObject<HTMLElement | null>,
  open: boolean,
  onClose: () => void,
  modal: boolean,
) {
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    if (!open) return;
    const before = focusToRestore(ref.current);
    const layer: Layer = { el: () => ref.current, close: () => close.current(), modal };
    layers.push(layer);
    if (layers.length === 1) listen(true);
    const root = ref.current;
    if (root) {
      const target = modal
        ? (root.querySelector<HTMLElement>('[data-autofocus]') ?? focusables(root)[0] ?? root)
        : root;
      target.focus({ preventScroll: true });
    }
    return () => {
      const i = layers.indexOf(layer);
      if (i >= 0) layers.splice(i, 1);
      if (layers.length === 0) listen(false);
      // Back where the person was, unless they have since put the focus somewhere else on purpose.
      const now = document.activeElement;
      const lost = !now || now === document.body || !now.isConnected || (root?.contains(now) ?? false);
      const back = before?.el.isConnected ? before.el : before?.trigger?.isConnected ? before.trigger : null;
      if (lost && back) back.focus({ preventScroll: true });
    };
  }, [open, modal, ref]);
}
