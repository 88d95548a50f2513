// The window's Escape: it clears the selected record (the inspector's field tree
// and hex go with it) unless something closer to the key has it first: the help,
// a modal dialog, a text field, or a popup the same key closed.
import { describe, it, expect, beforeEach, vi } from 'vitest';
import { useUi } from '../store/ui-store';
import { dismisses } from './popup-dismiss';
import { onShortcutKey } from './shortcuts';
import type * as DialogLayers from './dialog-layers';

// vi.mock is hoisted above the imports: shortcuts.ts sees this modalOpen.
const layers = vi.hoisted(() => ({ modal: false }));
vi.mock('./dialog-layers', async (original) => ({
  ...(await original<typeof DialogLayers>()),
  modalOpen: () => layers.modal,
}));

const uiInitial = { ...useUi.getState() };

/** A keydown as the window hears it, from an element with `tagName`. */
function keydown(key: string, tagName = 'DIV'): KeyboardEvent {
  const e = new Event('keydown', { cancelable: true });
  Object.defineProperties(e, {
    key: { value: key },
    target: { value: { tagName, isContentEditable: false } },
  });
  return e as KeyboardEvent;
}

const SELECTED = {
  selectedSeq: 42,
  selectedField: [0, 1],
  ladderPin: { seq: 42, round: 3 },
  selectedRank: 2,
  selectedHost: 0,
};
const recordSelection = () => {
  const s = useUi.getState();
  return { seq: s.selectedSeq, field: s.selectedField, pin: s.ladderPin };
};

describe('Escape and the selected record', () => {
  beforeEach(() => {
    useUi.setState({ ...uiInitial, ...SELECTED });
    layers.modal = false;
  });

  it('clears the selected record, its field and the ladder pin it set; the rank and host stay selected', () => {
    onShortcutKey(keydown('Escape'));
    expect(recordSelection()).toEqual({ seq: null, field: null, pin: null });
    expect(useUi.getState().selectedRank).toBe(2);
    expect(useUi.getState().selectedHost).toBe(0);
  });

  it('leaves the selection alone in a text input, a text area or a select (Escape keeps its meaning there)', () => {
    for (const tag of ['INPUT', 'TEXTAREA', 'SELECT']) {
      onShortcutKey(keydown('Escape', tag));
      expect(recordSelection(), tag).toEqual({ seq: 42, field: [0, 1], pin: { seq: 42, round: 3 } });
    }
  });

  it('behind a modal dialog does nothing (the dialog takes its Escape)', () => {
    layers.modal = true;
    onShortcutKey(keydown('Escape'));
    expect(recordSelection().seq).toBe(42);
  });

  it('closes the help first and keeps the selection', () => {
    useUi.setState({ helpOpen: true });
    onShortcutKey(keydown('Escape'));
    expect(useUi.getState().helpOpen).toBe(false);
    expect(recordSelection().seq).toBe(42);
  });

  it('an Escape that closed a popup (the More menu, the column chooser) does not also clear the selection', () => {
    const e = keydown('Escape');
    expect(dismisses(e, null)).toBe(true);
    onShortcutKey(e);
    expect(recordSelection().seq).toBe(42);
  });

  it('a popup closes on Escape and a press outside it, not on another key or a press inside', () => {
    const inside = { contains: (n: unknown) => n === 'in' } as unknown as Node;
    const press = (target: string) => {
      const e = new Event('mousedown');
      Object.defineProperty(e, 'target', { value: target });
      return e;
    };
    const other = keydown('a');
    expect(dismisses(other, inside)).toBe(false);
    expect(other.defaultPrevented).toBe(false);
    expect(dismisses(press('in'), inside)).toBe(false);
    expect(dismisses(press('out'), inside)).toBe(true);
  });
});
